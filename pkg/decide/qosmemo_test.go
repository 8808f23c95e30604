package decide

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/workload"
)

// changeNode is one random change to a node: a workload's QoS text, CPU
// need, memory limit or pinned containers changed, a workload removed,
// added, or removed and made again under its name with other text, or a
// node-level input changed (the QoS configuration, the kernel's files, the
// memory QoS options). It returns what it did, for the failure's message.
func changeNode(r *rand.Rand, obs *Observation, next *int) string {
	ws := slices.Clone(obs.Workloads)
	cfg := *obs.Config // a new pointer, as the source gives for any change
	obs.Config = &cfg
	defer func() {
		slices.SortFunc(ws, func(a, b workload.Workload) int { return cmpString(a.Name, b.Name) })
		obs.Workloads = ws
	}()
	pick := func() *workload.Workload { return &ws[r.IntN(len(ws))] }
	fresh := func(name string) workload.Workload {
		w := testWorkload(name, 0, false, r.IntN(3) == 0, randomMemQoSAnnotation(r))
		w.UID = name
		w.Containers = append(w.Containers, workload.Container{Name: "c", Cgroup: w.Cgroup + "/c", CPULimitMilli: 1000})
		w.CPUQoS = cpuqos.Workload{Class: []string{"LS", "BE", "LSR", ""}[r.IntN(4)]}
		return w
	}
	switch k := r.IntN(12); {
	case len(ws) == 0 || k == 0:
		*next++
		ws = append(ws, fresh(fmt.Sprintf("w%02d", *next)))
		return "added"
	case k == 1:
		i := r.IntN(len(ws))
		name := ws[i].Name
		ws = slices.Delete(ws, i, i+1)
		return "removed " + name
	case k == 2:
		w := pick()
		*w = fresh(w.Name)
		return "made again " + w.Name
	case k == 3:
		w := pick()
		class := map[bool]string{true: "BE", false: "LS"}[r.IntN(2) == 0]
		w.SetMemQoS(workload.MemQoSOf("", map[string]string{workload.LabelQoSClass: class}, randomMemQoSAnnotation(r), "",
			[]memqos.Container{{Name: w.Name, RequestBytes: int64(1+r.IntN(4)) * 100 * mib, LimitBytes: 400 * mib}}))
		return "memory QoS of " + w.Name
	case k == 4:
		w := pick()
		w.CPUQoS.Class = []string{"LS", "BE", "LSR"}[r.IntN(3)]
		w.CPUQoSInvalid = []string{"", "", "bad class"}[r.IntN(3)]
		return "CPU QoS of " + w.Name
	case k == 5:
		w := pick()
		w.OwnsMemoryLimit, w.MemoryLimit = r.IntN(2) == 0, int64(r.IntN(3))*mib
		w.Containers = slices.Clone(w.Containers)
		w.Containers[0].CPULimitMilli = int64(r.IntN(3000))
		return "limits of " + w.Name
	case k == 6:
		w := pick()
		if w.CPU.Exclusive {
			w.CPU = workload.CPUNeed{}
		} else if !w.BE {
			w.CPU = workload.CPUNeed{Exclusive: true, CPUs: 1 + r.IntN(6)}
		}
		return "CPU need of " + w.Name
	case k == 7:
		w := pick()
		obs.Kubelet = Kubelet{Policy: "static"}
		if r.IntN(2) == 0 {
			c := w.Containers[len(w.Containers)-1]
			obs.Kubelet.Pinned = map[string]map[string]cpuset.CPUSet{w.UID: {c.Name: cpuset.New(2, 3)}}
		}
		return "the kubelet's pins"
	case k == 8:
		on := &cpuqos.ClassConfig{Enable: new(r.IntN(2) == 0)}
		cfg.CPUQoS = cpuqos.Config{LS: on, BE: on}
		obs.CPUIdle = r.IntN(2) == 0
		return "the node's CPU QoS"
	case k == 9:
		cfg.CPUBurst = cpuburst.NodeConfig{Strategy: cpuburst.Config{Policy: new(cpuburst.Auto), CPUBurstPercent: new(int64(50 + r.IntN(100)))}}
		obs.Burst.Kernel = r.IntN(2) == 0
		return "the node's CPU Burst"
	case k == 10:
		on := &memqos.ClassConfig{Enable: new(r.IntN(2) == 0)}
		cfg.MemQoS = memqos.Config{LS: on, BE: on}
		return "the node's memory QoS"
	default:
		obs.ThrottleNotBelowRequest, obs.V1SoftLimitForLow = r.IntN(2) == 0, r.IntN(2) == 0
		return "the memory QoS options"
	}
}

func randomMemQoSAnnotation(r *rand.Rand) map[string]string {
	switch r.IntN(3) {
	case 0:
		return map[string]string{workload.AnnotationMemoryQoS: `{"policy":"auto"}`}
	case 1:
		return map[string]string{workload.AnnotationMemoryQoS: `{"policy":"none"}`}
	}
	return nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestIncrementalDecideEqualsFresh: on random sequences of changes to a
// node, a decision that reuses the last one's steps for the workloads that
// did not change gives the same Ready as a decision made afresh on the same
// observation and memory; and the reuse happens (else the test would hold
// of any memo).
func TestIncrementalDecideEqualsFresh(t *testing.T) {
	reused := 0
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 0x44))
		in := randomInput(rng)
		cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: in.Reserved, BEPool: cpuset.New()}
		obs := Observation{Topology: in.Topology, Config: cfg, Workloads: in.Workloads, Prepared: map[string]bool{}}
		for i := range obs.Workloads {
			obs.Workloads[i].UID = obs.Workloads[i].Name
			obs.Workloads[i].CPUBurst = &cpuburst.Config{Policy: new(cpuburst.Auto)}
		}
		next := len(obs.Workloads)
		var mem Memory
		var done []string
		for step := range 25 {
			for _, w := range obs.Workloads {
				obs.Prepared[w.Cgroup] = true
			}
			inc := Decide(obs, mem)
			afresh := mem
			afresh.Last = nil
			full := Decide(obs, afresh)
			if diff := readyDiff(inc, full); diff != "" {
				t.Fatalf("seed %d step %d, after %v: the incremental decision differs from a fresh one: %s", seed, step, done, diff)
			}
			if mem.Last != nil && inc.Memory.Last != nil && mem.Last.qos != nil {
				for name, q := range inc.Memory.Last.qos.byName {
					if mem.Last.qos.byName[name] == q {
						reused++
					}
				}
			}
			mem = inc.Memory
			done = append(done, changeNode(rng, &obs, &next))
		}
	}
	if reused == 0 {
		t.Fatal("no step was ever reused: the memo is not exercised")
	}
}

// TestStepsDecideAgain: a container added to a workload under the same
// config (one about to be created, as the NRI answer sees it) is not in
// the last decision's key, so reusing that decision whole leaves it out;
// with the last decision's Steps the node is decided again, equal to a
// decision afresh, and the other workloads' steps are reused.
func TestStepsDecideAgain(t *testing.T) {
	in := randomInput(rand.New(rand.NewPCG(5, 6)))
	cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: in.Reserved, BEPool: cpuset.New(),
		MemQoS: memqos.Config{LS: &memqos.ClassConfig{Enable: new(true)}}}
	obs := Observation{Topology: in.Topology, Config: cfg, Prepared: map[string]bool{}}
	for i := range 4 {
		w := testWorkload(fmt.Sprintf("pod%d", i), 2-2*(i%2), i%2 == 0, false, nil)
		w.UID = w.Name
		obs.Workloads = append(obs.Workloads, w)
		obs.Prepared[w.Cgroup] = true
	}
	mem := Decide(obs, Decide(obs, Memory{}).Memory).Memory // at rest: the assignments decided are in force
	ws := slices.Clone(obs.Workloads)
	w := &ws[2] // holds CPUs of its own, which its containers get
	w.Containers = append(slices.Clone(w.Containers), workload.Container{Name: "new", Cgroup: w.Cgroup + "/new"})
	obs.Workloads, obs.Prepared[w.Cgroup+"/new"] = ws, true
	writesNew := func(r Ready) bool {
		for _, op := range r.Desired.Ops {
			if op.Cgroup == w.Cgroup+"/new" {
				return true
			}
		}
		return false
	}
	fresh := mem
	fresh.Last = nil
	full := Decide(obs, fresh)
	if !writesNew(full) {
		t.Fatal("a decision afresh writes nothing to the new container: the test shows nothing")
	}
	if readyDiff(Decide(obs, mem), full) == "" {
		t.Fatal("the last decision reused whole is the same as a decision afresh: Steps would not be needed")
	}
	steps := mem
	steps.Last = mem.Last.Steps()
	again := Decide(obs, steps)
	if diff := readyDiff(again, full); diff != "" {
		t.Fatalf("decided with the last decision's steps, the node differs from a decision afresh: %s", diff)
	}
	for _, x := range obs.Workloads {
		reused := again.Memory.Last.qos.byName[x.Name] == mem.Last.qos.byName[x.Name]
		if reused != (x.Name != w.Name) {
			t.Errorf("%s: step reused %v, want %v", x.Name, reused, x.Name != w.Name)
		}
	}
	if (*Computed)(nil).Steps() != nil {
		t.Error("no last decision has steps")
	}
}

// readyDiff names the first part of two Readys that differs, "" if none.
func readyDiff(a, b Ready) string {
	ma, mb := a.Memory, b.Memory
	ma.Last, mb.Last = nil, nil
	for _, p := range []struct {
		name string
		x, y any
	}{
		{"desired", a.Desired, b.Desired}, {"save", a.Save, b.Save}, {"events", a.Events, b.Events},
		{"warnings", a.Warnings, b.Warnings}, {"problems", a.Problems, b.Problems}, {"memory", ma, mb},
	} {
		if !reflect.DeepEqual(p.x, p.y) {
			return fmt.Sprintf("%s:\n%+v\nagainst\n%+v", p.name, p.x, p.y)
		}
	}
	ops, restores := a.Writes()
	ops2, restores2 := b.Writes()
	if !reflect.DeepEqual(ops, ops2) || !reflect.DeepEqual(restores, restores2) {
		return "writes"
	}
	return ""
}

// TestQoSStepSeesPinnedContainers: a container the kubelet pins after a
// decision loses its QoS files in the next one, though its workload did
// not change; and gets them back once unpinned.
func TestQoSStepSeesPinnedContainers(t *testing.T) {
	in := randomInput(rand.New(rand.NewPCG(1, 2)))
	w := testWorkload("pod", 0, false, false, nil)
	w.UID, w.CPUQoS.Class = "uid", "LS"
	w.Containers = append(w.Containers, workload.Container{Name: "c", Cgroup: w.Cgroup + "/c", CPULimitMilli: 1000})
	cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: in.Reserved, BEPool: cpuset.New(),
		CPUBurst: cpuburst.NodeConfig{Strategy: cpuburst.Config{Policy: new(cpuburst.Auto)}}}
	obs := Observation{Topology: in.Topology, Config: cfg, Workloads: []workload.Workload{w},
		Prepared: map[string]bool{w.Cgroup: true, w.Cgroup + "/c": true}, Burst: BurstObservation{Kernel: true}}
	writesC := func(r Ready) bool {
		for _, op := range r.Desired.Ops {
			if op.Cgroup == w.Cgroup+"/c" && op.Knob != "cpuset.cpus" && op.Knob != "cpuset.mems" {
				return true
			}
		}
		return false
	}
	r := Decide(obs, Memory{})
	if !writesC(r) {
		t.Fatal("the container's QoS files are not written before it is pinned: the test shows nothing")
	}
	for _, pinned := range []bool{true, false} {
		obs.Kubelet = Kubelet{Policy: "static"}
		if pinned {
			obs.Kubelet.Pinned = map[string]map[string]cpuset.CPUSet{"uid": {"c": cpuset.New(2, 3)}}
		}
		r = Decide(obs, r.Memory)
		if writesC(r) == pinned {
			t.Fatalf("pinned %v: the container's QoS files written: %v", pinned, pinned)
		}
	}
}

// BenchmarkDecideOneChanged is a decision on a node of 300 pods of which
// one changed since the last decision (its memory QoS annotation), with the
// last decision's steps (incremental) and without (afresh); the two run
// side by side, so their ratio holds whatever else the machine runs.
func BenchmarkDecideOneChanged(b *testing.B) {
	for _, afresh := range []bool{false, true} {
		b.Run(map[bool]string{false: "incremental", true: "afresh"}[afresh], func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			topo := randomInput(rng).Topology
			on := &memqos.ClassConfig{Enable: new(true)}
			cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(0, 96), BEPool: cpuset.New(),
				MemQoS: memqos.Config{LS: on, BE: on}}
			obs := Observation{Topology: topo, Config: cfg, Prepared: map[string]bool{}}
			for i := range 300 {
				w := testWorkload(fmt.Sprintf("pod%03d", i), 0, false, i%3 == 2, randomMemQoSAnnotation(rng))
				w.Containers = append(w.Containers, workload.Container{Name: "c", Cgroup: w.Cgroup + "/c", CPULimitMilli: 1000})
				if i%5 == 0 {
					w.CPU = workload.CPUNeed{Exclusive: true, CPUs: 2}
				}
				obs.Workloads = append(obs.Workloads, w)
				obs.Prepared[w.Cgroup], obs.Prepared[w.Cgroup+"/c"] = true, true
			}
			mem := Decide(obs, Memory{}).Memory
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				ws := slices.Clone(obs.Workloads)
				w := &ws[i%len(ws)]
				w.SetMemQoS(workload.MemQoSOf("", map[string]string{workload.LabelQoSClass: "LS"}, randomMemQoSAnnotation(rng), "",
					[]memqos.Container{{Name: w.Name, RequestBytes: int64(1+i%4) * 100 * mib, LimitBytes: 400 * mib}}))
				c := *cfg // a new pointer, as the source gives for any change
				obs.Workloads, obs.Config = ws, &c
				if afresh {
					mem.Last = nil
				}
				b.StartTimer()
				mem = Decide(obs, mem).Memory
			}
		})
	}
}
