package decide

import (
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

const mib = 1 << 20

func testWorkload(name string, cpus int, exclusive, be bool, ann map[string]string) workload.Workload {
	cg := "locus.slice/" + name
	class := "LS"
	if be {
		class = "BE"
	}
	w := workload.Workload{
		Name: name, Cgroup: cg, Containers: []workload.Container{{Name: name, Cgroup: cg}}, BE: be,
		CPU: workload.CPUNeed{Exclusive: exclusive, CPUs: cpus, Policy: cpualloc.FullPCPUs},
	}
	// Its text read as it arrives, as a source does.
	w.SetMemQoS(workload.MemQoSOf("", map[string]string{workload.LabelQoSClass: class}, ann, "",
		[]memqos.Container{{Name: name, RequestBytes: 100 * mib, LimitBytes: 200 * mib}}))
	return w
}

func opValue(ops []cgroupfile.Op, cg string, k cgroupfile.Knob) (string, bool) {
	for _, op := range ops {
		if op.Cgroup == cg && op.Knob == k {
			return op.Value, true
		}
	}
	return "", false
}

func TestComputeSmallMachine(t *testing.T) {
	topo := fixture.MustBuild(fixture.Intel2S96C)
	auto := map[string]string{workload.AnnotationMemoryQoS: `{"policy":"auto","lowLimitPercent":100}`}
	in := Input{Topology: topo, Reserved: cpuset.New(0, 96), BEPool: cpuset.New(),
		Workloads: []workload.Workload{
			testWorkload("redis", 4, true, false, auto),
			testWorkload("web", 0, false, false, nil),
			testWorkload("batch", 0, false, true, auto),
		}}
	d := Compute(in)
	if len(d.Problems) != 0 {
		t.Fatalf("problems: %v", d.Problems)
	}
	redis := d.Assignments["redis"].CPUs
	if redis.Size() != 4 || redis.Contains(0) || redis.Contains(96) || len(topo.NodesOf(redis)) != 1 {
		t.Fatalf("redis got %s: want 4 CPUs on one node, no reserved", redis)
	}
	wantShared := topo.CPUSet().Difference(cpuset.New(0, 96)).Difference(redis)
	if got, _ := opValue(d.Ops, "locus.slice/web", cgroupfile.CPUSetCPUs); got != wantShared.String() {
		t.Errorf("web cpus = %s, want shared pool %s", got, wantShared)
	}
	if got, _ := opValue(d.Ops, "locus.slice/redis", cgroupfile.CPUSetMems); got != "0" && got != "1" {
		t.Errorf("redis mems = %q, want its single node", got)
	}
	if got, _ := opValue(d.Ops, "locus.slice/web", cgroupfile.CPUSetMems); got != "0-1" {
		t.Errorf("web mems = %q, want 0-1", got)
	}
	// LS auto: lowLimitPercent 100 of a 100 MiB request.
	if got, _ := opValue(d.Ops, "locus.slice/redis", cgroupfile.MemoryLow); got != "104857600" {
		t.Errorf("redis memory.low = %q, want 104857600", got)
	}
	// web has no memory QoS: its files are restored, never written.
	if _, ok := opValue(d.Ops, "locus.slice/web", cgroupfile.MemoryLow); ok {
		t.Errorf("web memory.low written though memory QoS is off")
	}
	restored := false
	for _, r := range d.Restores {
		restored = restored || (r.Cgroup == "locus.slice/web" && r.Knob == cgroupfile.MemoryLow)
	}
	if !restored {
		t.Errorf("web memory.low not restored: %v", d.Restores)
	}

	// A second decision with the first one's assignments moves nothing, even
	// when a new exclusive workload arrives and sorts first.
	in.Previous = d.Assignments
	in.Workloads = append(in.Workloads, testWorkload("aaa", 8, true, false, nil))
	d2 := Compute(in)
	if !d2.Assignments["redis"].CPUs.Equals(redis) {
		t.Fatalf("redis moved from %s to %s", redis, d2.Assignments["redis"].CPUs)
	}
	if !d2.Assignments["aaa"].CPUs.Intersection(redis).IsEmpty() {
		t.Fatalf("aaa %s overlaps redis %s", d2.Assignments["aaa"].CPUs, redis)
	}
}

func TestComputeProblemsKeepWorkloadsRunning(t *testing.T) {
	topo := fixture.MustBuild(fixture.Small4)
	big := testWorkload("big", 8, true, false, nil)
	decided := testWorkload("decided", 2, true, false, nil)
	decided.CPU.Decided = cpuset.New(2, 9)
	bad := testWorkload("bad", 0, false, false, map[string]string{workload.AnnotationMemoryQoS: `{"policy":`})
	d := Compute(Input{Topology: topo, Workloads: []workload.Workload{big, decided, bad}})
	reasons := map[string]string{}
	for _, p := range d.Problems {
		reasons[p.Workload] = p.Reason
	}
	want := map[string]string{"big": "CPUAllocationFailed", "decided": "CPUSetConflict", "bad": "InvalidMemoryQOS"}
	for w, r := range want {
		if reasons[w] != r {
			t.Errorf("%s: problem %q, want %q (all: %v)", w, reasons[w], r, d.Problems)
		}
	}
	for _, w := range []string{"big", "decided", "bad"} {
		if got, _ := opValue(d.Ops, "locus.slice/"+w, cgroupfile.CPUSetCPUs); got != "0-3" {
			t.Errorf("%s cpus = %q, want the shared pool 0-3", w, got)
		}
	}
}

func TestComputeBEPoolAndEmptySharedPool(t *testing.T) {
	topo := fixture.MustBuild(fixture.Small4)
	in := Input{Topology: topo, Reserved: cpuset.New(0), BEPool: cpuset.New(3),
		Workloads: []workload.Workload{testWorkload("all", 3, true, false, nil), testWorkload("be", 0, false, true, nil)}}
	d := Compute(in)
	if got, _ := opValue(d.Ops, "locus.slice/be", cgroupfile.CPUSetCPUs); got != "0" {
		t.Errorf("be cpus = %q, want the reserved CPU 0 once exclusive CPUs take the rest", got)
	}
	found := false
	for _, p := range d.Problems {
		found = found || strings.Contains(p.Reason, "SharedPoolEmpty")
	}
	if !found {
		t.Errorf("no SharedPoolEmpty problem: %v", d.Problems)
	}
	in.Workloads = in.Workloads[1:]
	d = Compute(in)
	if got, _ := opValue(d.Ops, "locus.slice/be", cgroupfile.CPUSetCPUs); got != "3" {
		t.Errorf("be cpus = %q, want the BE pool 3", got)
	}
}

func TestAssignmentJSONRoundTrip(t *testing.T) {
	a := workload.Assignment{CPUs: cpuset.New(1, 2, 3, 9), Policy: cpualloc.StaticBurst, RequestMilli: 1000}
	b, err := a.MarshalJSON()
	if err != nil || string(b) != `{"cpus":"1-3,9","policy":"static-burst","requestMilli":1000}` {
		t.Fatalf("marshal = %s, %v", b, err)
	}
	var back workload.Assignment
	if err := back.UnmarshalJSON(b); err != nil || !back.CPUs.Equals(a.CPUs) || back.Policy != a.Policy {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
	if err := back.UnmarshalJSON([]byte(`{"cpus":"x"}`)); err == nil {
		t.Fatal("bad cpus accepted")
	}
}

// A new decision made elsewhere never moves a workload that already holds
// the CPUs it names, whatever the name order: it is refused instead. A
// decision already in force is kept like any assignment.
func TestAssignKeepsWhatIsInForce(t *testing.T) {
	topo := fixture.MustBuild(fixture.Small4)
	needs := map[string]workload.CPUNeed{
		"zzz-kept": {Exclusive: true, CPUs: 2, Policy: cpualloc.FullPCPUs},
		"mmm-held": {Exclusive: true, CPUs: 1, Policy: cpualloc.FullPCPUs, Decided: cpuset.New(3)},
		"aaa-new":  {Exclusive: true, CPUs: 2, Policy: cpualloc.FullPCPUs, Decided: cpuset.New(1, 2)},
	}
	prev := map[string]workload.Assignment{
		"zzz-kept": {CPUs: cpuset.New(0, 1), Policy: cpualloc.FullPCPUs},
		"mmm-held": {CPUs: cpuset.New(3), Policy: cpualloc.FullPCPUs},
	}
	out, problems := Assign(topo, cpuset.New(), Kubelet{}, needs, prev)
	if !out["zzz-kept"].CPUs.Equals(cpuset.New(0, 1)) || !out["mmm-held"].CPUs.Equals(cpuset.New(3)) {
		t.Fatalf("held CPUs moved: %v", out)
	}
	if _, ok := out["aaa-new"]; ok || len(problems) != 1 || problems[0].Workload != "aaa-new" || problems[0].Reason != "CPUSetConflict" {
		t.Fatalf("aaa-new: %v, problems %v; want a CPUSetConflict", out["aaa-new"], problems)
	}
	// Once the CPUs are free the decision applies.
	delete(needs, "zzz-kept")
	out, problems = Assign(topo, cpuset.New(), Kubelet{}, needs, out)
	if !out["aaa-new"].CPUs.Equals(cpuset.New(1, 2)) || len(problems) != 0 {
		t.Fatalf("after zzz-kept left: %v, %v", out, problems)
	}
}

// With no reserved CPU to fall back on, a shared pool emptied by exclusive
// CPUs leaves the shared workloads' cpusets alone: an empty list is never
// written (the kernel refuses it, at every reconcile).
func TestComputeNeverWritesAnEmptyCPUSet(t *testing.T) {
	topo := fixture.MustBuild(fixture.Small4)
	in := Input{Topology: topo, Workloads: []workload.Workload{testWorkload("all", 8, true, false, nil), testWorkload("be", 0, false, true, nil)}}
	in.Workloads[0].CPU.CPUs = topo.CPUSet().Size()
	d := Compute(in)
	for _, op := range d.Ops {
		if (op.Knob == cgroupfile.CPUSetCPUs || op.Knob == cgroupfile.CPUSetMems) && op.Value == "" {
			t.Errorf("empty %s written to %s", op.Knob, op.Cgroup)
		}
	}
	found := false
	for _, p := range d.Problems {
		found = found || (p.Workload == "be" && p.Reason == "NoCPUs")
	}
	if !found {
		t.Errorf("no NoCPUs problem for be: %v", d.Problems)
	}
}
