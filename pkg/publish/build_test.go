package publish

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/coresched"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

func TestCPUCount(t *testing.T) {
	for list, want := range map[string]int{"": 0, "3": 1, "0-3": 4, "1-95,97-191": 190, "0,2,4-5": 4, "x": 0, "3-1": 0, "1-": 0} {
		if got := cpuCount(list); got != want {
			t.Errorf("cpuCount(%q) = %d, want %d", list, got, want)
		}
	}
}

// fakeCgroups is a v2 hierarchy of cgroups, each with its files and pids.
type fakeCgroups map[string]fakeCgroup

type fakeCgroup struct {
	files map[cgroup.Knob]string
	pids  []int
}

func (f fakeCgroups) Version() cgroup.Version { return cgroup.V2 }
func (f fakeCgroups) Exists(rel string) bool  { _, ok := f[rel]; return ok }
func (f fakeCgroups) Procs(rel string) ([]int, error) {
	if cg, ok := f[rel]; ok {
		return cg.pids, nil
	}
	return nil, fs.ErrNotExist
}
func (f fakeCgroups) ReadKnob(rel string, k cgroup.Knob) (string, error) {
	if v, ok := f[rel].files[k]; ok {
		return v, nil
	}
	return "", fs.ErrNotExist
}

func TestBuild(t *testing.T) {
	topo := &topology.Topology{CPUs: []topology.CPU{{ID: 0}, {ID: 1, Core: 1}, {ID: 2, Core: 2}, {ID: 3, Core: 3}},
		Nodes: []topology.NUMANode{{ID: 0, CPUs: cpuset.New(0, 1, 2, 3)}}}
	cgs := fakeCgroups{
		"pods/db":  {files: map[cgroup.Knob]string{"memory.min": "1024", "memory.soft_limit_in_bytes": "5", cgroup.CPUShares: "100"}, pids: []int{7}},
		"pods/web": {files: map[cgroup.Knob]string{"memory.high": "max"}},
	}
	in := Input{
		Time: time.Unix(1, 0).UTC(), Config: "cfg", Topology: topo, Cgroups: cgs,
		Decided: decide.Desired{
			Pools: decide.Pools{Exclusive: cpuset.New(2, 3), Shared: cpuset.New(0, 1)},
			Workloads: []decide.WorkloadState{
				{Name: "db", Pool: "exclusive", CPUs: "2-3", Mems: "0", NUMANodes: []int{0}, MemQoSOn: true, MemQoSWhy: "on",
					CPUQoSWhy: "ls", CoreIsolation: true, CoreIsolationWhy: "asked",
					MemoryByNode: map[int]cpualloc.Memory{1: {Bytes: 2 << 30, HugePages2Mi: 4 << 20}, 0: {Bytes: 1 << 30}, 2: {}}},
				{Name: "web", Pool: "shared", CPUs: "0-1", CoreIsolation: true, CoreIsolationWhy: "asked"},
			},
			Problems: []workload.Problem{{Reason: "NodeThing", Message: "node-wide"}},
		},
		Problems:  []workload.Problem{{Workload: "web", Reason: "Late", Message: "not yet"}},
		Workloads: []Workload{{Name: "db", Source: "pod", Cgroup: "pods/db"}, {Name: "web", Cgroup: "pods/web"}, {Name: "gone", Cgroup: "pods/gone"}},
		Core:      coresched.Support{Available: true, Reason: "available"},
		Isolated:  func(w string) bool { return w == "db" },
	}
	st := Build(in)
	if st.Node.CgroupVersion != cgroup.V2.String() || st.Node.CPUs != "0-3" || st.Node.Exclusive != "2-3" || st.Node.Shared != "0-1" {
		t.Errorf("node = %+v", st.Node)
	}
	if !reflect.DeepEqual(st.Node.Problems, []string{"NodeThing: node-wide"}) {
		t.Errorf("node problems = %q", st.Node.Problems)
	}
	if len(st.Workloads) != 3 {
		t.Fatalf("workloads = %+v", st.Workloads)
	}
	db, web, gone := st.Workloads[0], st.Workloads[1], st.Workloads[2]
	// memory.soft_limit_in_bytes only with V1SoftLimitForLow; cpu.shares is named by its v2 file.
	if !reflect.DeepEqual(db.MemoryQOS, status.MemQoSStatus{Enabled: true, Reason: "on", Values: map[string]string{"memory.min": "1024"}}) {
		t.Errorf("db memory QoS = %+v", db.MemoryQOS)
	}
	if !reflect.DeepEqual(db.CPUQOS, status.CPUQoSStatus{Reason: "ls", Values: map[string]string{"cpu.weight": "100"},
		CoreIsolation: "asked; its processes share a core scheduling cookie of their own"}) {
		t.Errorf("db CPU QoS = %+v", db.CPUQOS)
	}
	// What it holds on each node, in node order, none where it holds nothing.
	if want := []status.NodeMemory{{Node: 0, Bytes: 1 << 30}, {Node: 1, Bytes: 2 << 30, HugePages2Mi: 4 << 20}}; !reflect.DeepEqual(db.MemoryByNode, want) {
		t.Errorf("db memory by node = %+v, want %+v", db.MemoryByNode, want)
	}
	if web.MemoryByNode != nil {
		t.Errorf("web memory by node = %+v, want none", web.MemoryByNode)
	}
	if !reflect.DeepEqual(db.PIDs, []int{7}) || db.Pool != "exclusive" || db.CPUs != "2-3" {
		t.Errorf("db = %+v", db)
	}
	if web.CPUQOS.CoreIsolation != "asked; no process to give a cookie yet" || !reflect.DeepEqual(web.Problems, []string{"Late: not yet"}) {
		t.Errorf("web = %+v", web)
	}
	if web.CPUQOS.Values != nil || !reflect.DeepEqual(web.MemoryQOS.Values, map[string]string{"memory.high": "max"}) || web.PIDs == nil {
		t.Errorf("web read back = %+v", web)
	}
	if gone.MemoryQOS.Values != nil || gone.Pool != "" || gone.PIDs == nil || len(gone.PIDs) != 0 {
		t.Errorf("gone = %+v", gone)
	}
	in.V1SoftLimitForLow = true
	if got := Build(in).Workloads[0].MemoryQOS.Values["memory.soft_limit_in_bytes"]; got != "5" {
		t.Errorf("soft limit = %q, want it read back with V1SoftLimitForLow", got)
	}
}

func TestPublishWritesOnChange(t *testing.T) {
	dir := t.TempDir()
	m := NewMetrics("", "")
	p := NewPublisher(dir, m)
	st := status.Status{Time: time.Unix(1, 0).UTC(), Config: "cfg",
		Workloads: []status.WorkloadStatus{{Name: "db", Pool: "exclusive", CPUs: "2-3"}}}
	if err := p.Publish(st); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(m.cpus.WithLabelValues(WorkloadLabelValues("db", "exclusive")...)); got != 2 {
		t.Errorf("locus_workload_cpus = %v, want 2", got)
	}
	file := filepath.Join(dir, status.File)
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	st.Time = time.Unix(2, 0).UTC()
	if err := p.Publish(st); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("status.json written again when only the time changed: %v", err)
	}
	if !p.Current().Time.Equal(st.Time) {
		t.Errorf("current status time = %v, want %v", p.Current().Time, st.Time)
	}
	st.Workloads = nil
	if err := p.Publish(st); err != nil {
		t.Fatal(err)
	}
	if got, err := status.Read(dir); err != nil || got.Workloads != nil {
		t.Errorf("status.json = %+v, %v", got, err)
	}
	if n := testutil.CollectAndCount(m.cpus); n != 0 {
		t.Errorf("removed workload still has %d series", n)
	}
}

// A libvirt domain's status names the domain and each thread cgroup's
// CPUs, as the decision gave them, for locus status and the views.
func TestBuildNamesTheDomainAndItsThreads(t *testing.T) {
	threads := map[string]string{"vcpu0": "2", "vcpu1": "3", "emulator": "0-1"}
	topo := &topology.Topology{CPUs: []topology.CPU{{ID: 0}, {ID: 1, Core: 1}, {ID: 2, Core: 2}, {ID: 3, Core: 3}},
		Nodes: []topology.NUMANode{{ID: 0, CPUs: cpuset.New(0, 1, 2, 3)}}}
	in := Input{Cgroups: fakeCgroups{}, Topology: topo,
		Decided:   decide.Desired{Workloads: []decide.WorkloadState{{Name: "vm", Pool: "exclusive", CPUs: "2-3", ContainerCPUs: threads}}},
		Workloads: []Workload{{Name: "vm", Source: "libvirt", Cgroup: "machine/qemu-1-db.libvirt-qemu", LibvirtDomain: "db"}, {Name: "other"}}}
	st := Build(in)
	if w := st.Workloads[0]; w.LibvirtDomain != "db" || !reflect.DeepEqual(w.ContainerCPUs, threads) {
		t.Errorf("the domain's status: %q %v, want db and %v", w.LibvirtDomain, w.ContainerCPUs, threads)
	}
	if w := st.Workloads[1]; w.LibvirtDomain != "" || w.ContainerCPUs != nil {
		t.Errorf("another workload's status: %q %v", w.LibvirtDomain, w.ContainerCPUs)
	}
}
