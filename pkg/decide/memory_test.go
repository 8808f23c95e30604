package decide

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

const gib = uint64(1) << 30

// memShape is two sockets of one NUMA node each, 8 CPUs a node: node 0
// has 16 GiB, node 1 24 GiB and the only huge pages (512 of 2 MiB).
var memShape = fixture.Shape{Name: "mem-2n", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 4,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 * gib, MemoryByNode: map[int]uint64{1: 24 * gib},
	HugePages: []fixture.NodeHugePages{{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 512, Free: 512}}}}

func memObservation(t *testing.T, ws ...workload.Workload) Observation {
	t.Helper()
	topo, err := fixture.Build(memShape)
	if err != nil {
		t.Fatal(err)
	}
	obs := Observation{Topology: topo, Config: &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(), BEPool: cpuset.New()},
		Workloads: ws, Prepared: map[string]bool{}}
	for _, w := range ws {
		obs.Prepared[w.Cgroup] = true
	}
	return obs
}

func memWorkload(name string, cpus int, m cpualloc.Memory) workload.Workload {
	w := testWorkload(name, cpus, true, false, nil)
	w.CPU.Memory = m
	return w
}

func memsOf(t *testing.T, r Ready, cg string) string {
	t.Helper()
	ops, _ := r.Writes()
	v, ok := opValue(ops, cg, cgroupfile.CPUSetMems)
	if !ok {
		t.Fatalf("no cpuset.mems written to %s", cg)
	}
	return v
}

func TestDecideMemory(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ws       []workload.Workload
		kube     Kubelet
		mems     map[string]string // cgroup: cpuset.mems
		cpuNodes map[string][]int  // workload: its CPUs' nodes
		held     map[string]map[int]cpualloc.Memory
		refused  map[string]string // workload: a text of its Warning
		// local are workloads whose memory is all on their CPUs' one node.
		local map[string]cpualloc.Memory
	}{{
		name:  "fits on one node: mems are the CPUs' node",
		ws:    []workload.Workload{memWorkload("a", 2, cpualloc.Memory{Bytes: 4 * gib})},
		local: map[string]cpualloc.Memory{"a": {Bytes: 4 * gib}},
	}, {
		name: "more memory than any node has: spilled, mems are the group",
		ws:   []workload.Workload{memWorkload("a", 2, cpualloc.Memory{Bytes: 30 * gib})},
		mems: map[string]string{"locus.slice/a": "0-1"},
		held: map[string]map[int]cpualloc.Memory{"a": {0: {Bytes: 16 * gib}, 1: {Bytes: 14 * gib}}},
	}, {
		name: "more than its CPUs' node has: the CPUs go where the memory is",
		ws:   []workload.Workload{memWorkload("a", 2, cpualloc.Memory{Bytes: 20 * gib})},
		mems: map[string]string{"locus.slice/a": "1"}, cpuNodes: map[string][]int{"a": {1}},
	}, {
		name:    "no node holds it: refused with the reason, shared pool",
		ws:      []workload.Workload{memWorkload("a", 2, cpualloc.Memory{Bytes: 41 * gib}), testWorkload("web", 0, false, false, nil)},
		mems:    map[string]string{"locus.slice/a": "0-1", "locus.slice/web": "0-1"},
		refused: map[string]string{"a": "memory"},
	}, {
		name: "huge pages on one node only: lands there",
		ws:   []workload.Workload{memWorkload("a", 2, cpualloc.Memory{Bytes: gib, HugePages2Mi: 512 << 20})},
		mems: map[string]string{"locus.slice/a": "1"}, cpuNodes: map[string][]int{"a": {1}},
		held: map[string]map[int]cpualloc.Memory{"a": {1: {Bytes: gib, HugePages2Mi: 512 << 20}}},
	}, {
		name: "more huge pages than the node has: refused",
		ws:   []workload.Workload{memWorkload("a", 2, cpualloc.Memory{HugePages2Mi: 2 * gib})}, refused: map[string]string{"a": "hugepages-2Mi"},
		mems: map[string]string{"locus.slice/a": "0-1"},
	}, {
		name: "the memory manager's assignments are taken",
		kube: Kubelet{Policy: "none", MemBlocks: []MemBlock{{Memory: cpualloc.Memory{Bytes: 20 * gib}, Nodes: []int{1}}}},
		ws:   []workload.Workload{memWorkload("a", 2, cpualloc.Memory{Bytes: 10 * gib})},
		mems: map[string]string{"locus.slice/a": "0"}, cpuNodes: map[string][]int{"a": {0}},
	}, {
		name: "the kubelet's reserve is taken",
		kube: Kubelet{Policy: "none", MemReserved: map[int]uint64{1: 20 * gib}},
		ws:   []workload.Workload{memWorkload("a", 2, cpualloc.Memory{Bytes: 10 * gib})},
		mems: map[string]string{"locus.slice/a": "0"}, cpuNodes: map[string][]int{"a": {0}},
	}, {
		name: "the second that no longer fits is refused, the first kept",
		ws: []workload.Workload{memWorkload("a", 2, cpualloc.Memory{HugePages2Mi: 600 << 20}),
			memWorkload("b", 2, cpualloc.Memory{HugePages2Mi: 600 << 20})},
		mems: map[string]string{"locus.slice/a": "1"}, refused: map[string]string{"b": "hugepages-2Mi"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			obs := memObservation(t, tc.ws...)
			obs.Kubelet = tc.kube
			r := Decide(obs, Memory{})
			for cg, want := range tc.mems {
				if got := memsOf(t, r, cg); got != want {
					t.Errorf("%s: cpuset.mems %q, want %q", cg, got, want)
				}
			}
			for name, want := range tc.cpuNodes {
				if got := obs.Topology.NodesOf(r.Desired.Assignments[name].CPUs); !slices.Equal(got, want) {
					t.Errorf("%s: CPUs %s on nodes %v, want %v", name, r.Desired.Assignments[name].CPUs, got, want)
				}
			}
			for _, st := range r.Desired.Workloads {
				if want, ok := tc.held[st.Name]; ok && !sameHeld(st.MemoryByNode, want) {
					t.Errorf("%s holds %v, want %v", st.Name, st.MemoryByNode, want)
				}
			}
			for name, m := range tc.local {
				nodes := obs.Topology.NodesOf(r.Desired.Assignments[name].CPUs)
				if len(nodes) != 1 || memsOf(t, r, "locus.slice/"+name) != cpuset.New(nodes...).String() {
					t.Errorf("%s: CPUs on nodes %v, cpuset.mems %q", name, nodes, memsOf(t, r, "locus.slice/"+name))
				}
				for _, st := range r.Desired.Workloads {
					if st.Name == name && !sameHeld(st.MemoryByNode, map[int]cpualloc.Memory{nodes[0]: m}) {
						t.Errorf("%s holds %v, want %v on node %d", name, st.MemoryByNode, m, nodes[0])
					}
				}
			}
			for name, text := range tc.refused {
				if _, ok := r.Desired.Assignments[name]; ok {
					t.Errorf("%s assigned %v, want it refused", name, r.Desired.Assignments[name])
				}
				if !warned(r, ReasonCPUAllocationFailed, name, text) {
					t.Errorf("%s: no %s Warning naming %q: %v", name, ReasonCPUAllocationFailed, text, r.Warnings)
				}
			}
		})
	}
}

func sameHeld(got, want map[int]cpualloc.Memory) bool {
	for id, m := range want {
		if got[id] != m {
			return false
		}
	}
	for id, m := range got {
		if _, ok := want[id]; !ok && !m.IsZero() {
			return false
		}
	}
	return true
}

func warned(r Ready, reason, name, text string) bool {
	for _, e := range r.Warnings {
		if e.Reason == reason && e.Workload == name && strings.Contains(e.Message, text) {
			return true
		}
	}
	return false
}

// A refusal for memory changes nothing the agent keeps: the assignments in
// force stay, nothing is saved, and the agent decides on.
func TestMemoryRefusalKeepsState(t *testing.T) {
	a := memWorkload("a", 2, cpualloc.Memory{Bytes: 12 * gib})
	first := Decide(memObservation(t, a), Memory{})
	if !first.Save || len(first.Desired.Assignments) != 1 {
		t.Fatalf("first decision: save %v, assignments %v", first.Save, first.Desired.Assignments)
	}
	big := memWorkload("big", 2, cpualloc.Memory{Bytes: 30 * gib})
	r := Decide(memObservation(t, a, big), first.Memory)
	if r.Save || !SameAssignments(r.Desired.Assignments, first.Desired.Assignments) {
		t.Fatalf("save %v, assignments %v, want %v unchanged", r.Save, r.Desired.Assignments, first.Desired.Assignments)
	}
	if !warned(r, ReasonCPUAllocationFailed, "big", "memory") {
		t.Fatalf("no Warning for big: %v", r.Warnings)
	}
	if again := Decide(memObservation(t, a, big), r.Memory); len(again.Warnings) != 0 || again.Save {
		t.Fatalf("told again: %v, save %v", again.Warnings, again.Save)
	}
}

// A checkpoint written before memory was accounted names no memory nodes:
// it loads, its workloads keep their CPUs with mems on the CPUs' nodes, and
// their memory is counted there.
func TestOldCheckpointAssignment(t *testing.T) {
	var old map[string]workload.Assignment
	if err := json.Unmarshal([]byte(`{"a":{"cpus":"4,12","policy":"full-pcpus"}}`), &old); err != nil {
		t.Fatal(err)
	}
	a := memWorkload("a", 2, cpualloc.Memory{Bytes: 20 * gib})
	b := memWorkload("b", 2, cpualloc.Memory{Bytes: 10 * gib})
	r := Decide(memObservation(t, a, b), Memory{Assignments: old})
	if got := r.Desired.Assignments["a"]; !got.CPUs.Equals(cpuset.New(4, 12)) || got.MemNodes != nil {
		t.Fatalf("a: %+v, want CPUs 4,12 kept on their node", got)
	}
	if got := memsOf(t, r, "locus.slice/a"); got != "1" {
		t.Errorf("a: cpuset.mems %q, want 1", got)
	}
	// Node 1 holds 20 of its 24 GiB for a: b goes to node 0.
	if got := obs(t).NodesOf(r.Desired.Assignments["b"].CPUs); !slices.Equal(got, []int{0}) {
		t.Errorf("b on nodes %v, want [0]", got)
	}
	raw, err := json.Marshal(r.Desired.Assignments)
	if err != nil || !strings.Contains(string(raw), `"memory":{"bytes":21474836480}`) {
		t.Fatalf("saved as %s, %v", raw, err)
	}
}

func obs(t *testing.T) *topology.Topology { return memObservation(t).Topology }

// The scheduler's decision carries CPUs only: the agent widens their nodes
// to a group that holds the memory, or refuses a decision none holds.
func TestDecisionMemory(t *testing.T) {
	decided := func(name string, cpus cpuset.CPUSet, m cpualloc.Memory) workload.Workload {
		w := memWorkload(name, cpus.Size(), m)
		w.CPU.Decided = cpus
		w.CPU.Check = &workload.DecisionCheck{OptedIn: true, LimitCPUs: cpus.Size()}
		return w
	}
	r := Decide(memObservation(t, decided("fits", cpuset.New(0, 8), cpualloc.Memory{Bytes: 8 * gib}),
		decided("wide", cpuset.New(1, 9), cpualloc.Memory{Bytes: 20 * gib})), Memory{})
	if got := memsOf(t, r, "locus.slice/fits"); got != "0" {
		t.Errorf("fits: cpuset.mems %q, want 0", got)
	}
	if got := memsOf(t, r, "locus.slice/wide"); got != "0-1" {
		t.Errorf("wide: cpuset.mems %q, want 0-1", got)
	}
	if a := r.Desired.Assignments["wide"]; !a.CPUs.Equals(cpuset.New(1, 9)) || !slices.Equal(a.MemNodes, []int{0, 1}) {
		t.Errorf("wide: %+v, want its CPUs with memory nodes 0-1", a)
	}
	told := false
	for _, e := range r.Events {
		told = told || e.Reason == "CPUsAssigned" && e.Workload == "wide" && strings.Contains(e.Message, "memory on NUMA nodes [0 1]")
	}
	if !told {
		t.Errorf("events %v: want wide's CPUsAssigned to name its memory's nodes", r.Events)
	}
	r = Decide(memObservation(t, decided("none", cpuset.New(0, 8), cpualloc.Memory{Bytes: 50 * gib})), Memory{})
	if _, ok := r.Desired.Assignments["none"]; ok || !warned(r, ReasonResourceStatusRefused, "none", "does not fit") {
		t.Errorf("assignments %v, warnings %v: want none refused", r.Desired.Assignments, r.Warnings)
	}
}

// A workload that grows keeps its memory where it is held: its new CPUs
// come from its memory's nodes, and when they have too few it keeps the
// CPUs it holds, told why.
func TestResizeKeepsMemory(t *testing.T) {
	a := memWorkload("a", 2, cpualloc.Memory{Bytes: 20 * gib})
	first := Decide(memObservation(t, a), Memory{})
	held := first.Desired.Assignments["a"]
	node := obs(t).NodesOf(held.CPUs)
	if len(node) != 1 || node[0] != 1 {
		t.Fatalf("a on nodes %v, want 1, the only one with 20 GiB", node)
	}
	a.CPU.CPUs = 6
	r := Decide(memObservation(t, a), first.Memory)
	if got := r.Desired.Assignments["a"]; got.CPUs.Size() != 6 || !slices.Equal(obs(t).NodesOf(got.CPUs), []int{1}) || !held.CPUs.IsSubsetOf(got.CPUs) {
		t.Fatalf("grown to %v, want 6 CPUs of node 1 keeping %v", got.CPUs, held.CPUs)
	}
	a.CPU.CPUs = 10
	r = Decide(memObservation(t, a), r.Memory)
	if got := r.Desired.Assignments["a"]; got.CPUs.Size() != 6 || !hasProblem(r.Problems, ReasonResizeInfeasible, "a", "memNodes [1]") {
		t.Fatalf("grown to %v, problems %v: want 6 CPUs kept, ResizeInfeasible", got.CPUs, r.Problems)
	}
}

// The agent binds a decision's memory by the allocator's rule: the
// smallest group around its CPUs that holds it, not the nearest nodes
// added one by one. Nodes 0-1 share a socket; node 1 is small.
func TestDecisionMemorySpillsAsTheAllocator(t *testing.T) {
	shape := fixture.Shape{Name: "mem-4n", Sockets: 2, NUMAPerSocket: 2, L3PerNUMA: 1, CoresPerSocket: 4,
		ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 * gib, MemoryByNode: map[int]uint64{1: 2 * gib}}
	topo, err := fixture.Build(shape)
	if err != nil {
		t.Fatal(err)
	}
	w := memWorkload("big", 2, cpualloc.Memory{Bytes: 24 * gib})
	w.CPU.Decided = cpuset.New(0, 8)
	w.CPU.Check = &workload.DecisionCheck{OptedIn: true, LimitCPUs: 2}
	obs := memObservation(t, w)
	obs.Topology = topo
	r := Decide(obs, Memory{})
	if got := memsOf(t, r, "locus.slice/big"); got != "0,2" {
		t.Errorf("cpuset.mems %q, want 0,2 (the smallest group that holds 24 GiB around node 0)", got)
	}
}
