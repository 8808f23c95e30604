package decide

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// pod is a two-container pod: its cgroup, and app and side below it.
func pod(name, uid string, cpus int, exclusive bool) workload.Workload {
	w := testWorkload(name, cpus, exclusive, false, nil)
	w.UID = uid
	w.Containers = []workload.Container{{Name: "app", Cgroup: w.Cgroup + "/app"}, {Name: "side", Cgroup: w.Cgroup + "/side"}}
	return w
}

func problemsOf(ps []workload.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Reason+" "+p.Workload)
	}
	return out
}

func hasProblem(ps []workload.Problem, reason, name, text string) bool {
	for _, p := range ps {
		if p.Reason == reason && p.Workload == name && strings.Contains(p.Message, text) {
			return true
		}
	}
	return false
}

func TestKubeletStatic(t *testing.T) {
	topo := fixture.MustBuild(fixture.Intel2S96C)
	pinned := cpuset.New(2, 3, 98, 99)
	kube := Kubelet{Policy: "static", Pinned: map[string]map[string]cpuset.CPUSet{"uid-g": {"app": pinned}}}
	guaranteed := pod("ns/guaranteed", "uid-g", 0, false)
	asks := pod("ns/asks-too", "uid-g2", 4, true) // cpuset-scheduler, not pinned by the kubelet
	both := pod("ns/both", "uid-b", 2, true)      // cpuset-scheduler and pinned by the kubelet
	kube.Pinned["uid-b"] = map[string]cpuset.CPUSet{"app": cpuset.New(4), "side": cpuset.New(100)}
	shared := pod("ns/shared", "uid-s", 0, false)
	for _, tc := range []struct {
		name     string
		in       func(in *Input)
		check    func(t *testing.T, d Desired)
		problems []string
	}{{
		name: "the kubelet's CPUs are never given, its containers never written",
		check: func(t *testing.T, d Desired) {
			owned := pinned.Union(cpuset.New(4, 100))
			if a := d.Assignments["ns/asks-too"]; a.CPUs.Size() != 4 || !a.CPUs.Intersection(owned).IsEmpty() {
				t.Fatalf("asks-too got %s", a.CPUs)
			}
			if _, ok := d.Assignments["ns/both"]; ok {
				t.Fatal("a pod the kubelet pinned was assigned CPUs by Locus too")
			}
			if !d.Pools.Shared.Intersection(owned).IsEmpty() || !d.Pools.Kubelet.Equals(owned) {
				t.Fatalf("shared %s, kubelet %s", d.Pools.Shared, d.Pools.Kubelet)
			}
			for _, op := range d.Ops {
				if op.Cgroup == guaranteed.Cgroup+"/app" || strings.HasPrefix(op.Cgroup, both.Cgroup+"/") {
					t.Fatalf("writes %s of %s, a container the kubelet pinned", op.Knob, op.Cgroup)
				}
			}
			if v, ok := opValue(d.Ops, guaranteed.Cgroup+"/side", cgroupfile.CPUSetCPUs); !ok || v != d.Pools.Shared.String() {
				t.Fatalf("the unpinned container of a pinned pod: cpuset %q, %v", v, ok)
			}
			for _, st := range d.Workloads {
				if st.Name == "ns/guaranteed" && (st.Pool != "kubelet" || st.CPUs != pinned.String()) {
					t.Fatalf("status %+v", st)
				}
			}
		},
		problems: []string{"KubeletPinned ns/both"},
	}, {
		name: "a kept assignment the kubelet took is chosen again",
		in: func(in *Input) {
			in.Previous = map[string]workload.Assignment{"ns/asks-too": {CPUs: cpuset.New(3, 4, 5, 6), Policy: cpualloc.FullPCPUs}}
		},
		check: func(t *testing.T, d Desired) {
			if a := d.Assignments["ns/asks-too"]; a.CPUs.Size() != 4 || a.CPUs.Contains(3) || a.CPUs.Contains(4) {
				t.Fatalf("asks-too kept %s", a.CPUs)
			}
			if !hasProblem(d.Problems, "KubeletCPUConflict", "ns/asks-too", "cpus 3-4 are the kubelet's") {
				t.Fatalf("problems %v", d.Problems)
			}
		},
		problems: []string{"KubeletPinned ns/both", "KubeletCPUConflict ns/asks-too"},
	}, {
		name: "a scheduler's decision on the kubelet's CPUs is refused",
		in: func(in *Input) {
			for i := range in.Workloads {
				if in.Workloads[i].Name == "ns/asks-too" {
					in.Workloads[i].CPU.Decided = cpuset.New(1, 2, 3, 5)
				}
			}
		},
		check: func(t *testing.T, d Desired) {
			if _, ok := d.Assignments["ns/asks-too"]; ok {
				t.Fatal("a decision overlapping the kubelet's CPUs was applied")
			}
		},
		problems: []string{"KubeletPinned ns/both", "KubeletCPUConflict ns/asks-too"},
	}, {
		name: "an unreadable checkpoint: every CPU is the kubelet's, no cpuset written",
		in: func(in *Input) {
			in.Kubelet = Kubelet{Unknown: "checksum: corrupt"}
			in.Previous = map[string]workload.Assignment{"ns/asks-too": {CPUs: cpuset.New(5, 6, 7, 8), Policy: cpualloc.FullPCPUs}}
		},
		check: func(t *testing.T, d Desired) {
			if len(d.Assignments) > 0 {
				t.Fatalf("assignments %v", d.Assignments)
			}
			for _, op := range d.Ops {
				if op.Knob == cgroupfile.CPUSetCPUs || op.Knob == cgroupfile.CPUSetMems {
					t.Fatalf("writes %s of %s", op.Knob, op.Cgroup)
				}
			}
		},
		problems: []string{"KubeletCheckpointUnreadable "},
	}, {
		name: "reserved CPUs from the kubelet when the agent has none",
		in: func(in *Input) {
			in.Reserved = cpuset.New()
			in.Kubelet.Reserved = cpuset.New(0, 1, 96, 97)
		},
		check: func(t *testing.T, d Desired) {
			if d.Pools.Shared.Contains(0) || d.Pools.Shared.Contains(97) || !d.Pools.Reserved.Equals(cpuset.New(0, 1, 96, 97)) {
				t.Fatalf("shared %s, reserved %s", d.Pools.Shared, d.Pools.Reserved)
			}
			if a := d.Assignments["ns/asks-too"]; a.CPUs.Contains(1) || a.CPUs.Contains(96) {
				t.Fatalf("asks-too got reserved CPUs %s", a.CPUs)
			}
		},
		problems: []string{"KubeletPinned ns/both"},
	}, {
		name: "reserved CPUs of the agent and the kubelet disagree",
		in:   func(in *Input) { in.Kubelet.Reserved = cpuset.New(0, 1) },
		check: func(t *testing.T, d Desired) {
			if !d.Pools.Reserved.Equals(cpuset.New(0, 96)) {
				t.Fatalf("reserved %s", d.Pools.Reserved)
			}
		},
		problems: []string{"ReservedCPUsMismatch ", "KubeletPinned ns/both"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Topology: topo, Reserved: cpuset.New(0, 96), BEPool: cpuset.New(), Kubelet: kube,
				Workloads: []workload.Workload{guaranteed, asks, both, shared}}
			if tc.in != nil {
				tc.in(&in)
			}
			d := Compute(in)
			tc.check(t, d)
			if got := strings.Join(problemsOf(d.Problems), ","); got != strings.Join(tc.problems, ",") {
				t.Fatalf("problems %s, want %s (%v)", got, strings.Join(tc.problems, ","), d.Problems)
			}
		})
	}
}

// TestKubeletNoCPUOwnedTwice: on random nodes beside a random static
// kubelet (pinned pods, stale assignments over its CPUs, scheduler
// decisions on them), no CPU is both the kubelet's and a Locus workload's or
// in the shared pool, and no cgroup of a pinned container is written.
func TestKubeletNoCPUOwnedTwice(t *testing.T) {
	for seed := range uint64(150) {
		rng := rand.New(rand.NewPCG(seed, 0x6b))
		in := randomInput(rng)
		online := in.Topology.CPUSet().List()
		in.Kubelet = Kubelet{Policy: "static", Pinned: map[string]map[string]cpuset.CPUSet{}}
		in.Previous = map[string]workload.Assignment{}
		pinnedCg := map[string]bool{}
		for i := range in.Workloads {
			w := &in.Workloads[i]
			w.UID = fmt.Sprintf("uid-%d", i)
			var set []int
			for range 1 + rng.IntN(6) {
				set = append(set, online[rng.IntN(len(online))])
			}
			switch rng.IntN(4) {
			case 0: // the kubelet pinned its containers
				in.Kubelet.Pinned[w.UID] = map[string]cpuset.CPUSet{}
				for _, c := range w.Containers {
					in.Kubelet.Pinned[w.UID][c.Name] = cpuset.New(set...)
					pinnedCg[c.Cgroup] = true
				}
			case 1: // it held CPUs the kubelet may have taken since
				if w.CPU.Exclusive {
					in.Previous[w.Name] = workload.Assignment{CPUs: cpuset.New(set...), Policy: w.CPU.Policy, RequestMilli: w.CPU.RequestMilli}
				}
			case 2: // a scheduler chose CPUs the kubelet may hold
				if w.CPU.Exclusive {
					w.CPU.Decided = cpuset.New(set...)
				}
			}
		}
		d := Compute(in)
		owned := in.Kubelet.Owned(in.Topology.CPUSet())
		for name, a := range d.Assignments {
			if both := a.CPUs.Intersection(owned); !both.IsEmpty() {
				t.Fatalf("seed %d: CPUs %s are the kubelet's and %s's", seed, both, name)
			}
		}
		if both := d.Pools.Shared.Intersection(owned); !both.IsEmpty() {
			t.Fatalf("seed %d: CPUs %s are the kubelet's and in the shared pool", seed, both)
		}
		for _, op := range d.Ops {
			if pinnedCg[op.Cgroup] {
				t.Fatalf("seed %d: writes %s of %s, which the kubelet pinned", seed, op.Knob, op.Cgroup)
			}
		}
		for _, r := range d.Restores {
			if pinnedCg[r.Cgroup] {
				t.Fatalf("seed %d: restores %s of %s, which the kubelet pinned", seed, r.Knob, r.Cgroup)
			}
		}
	}
}

// TestDecideFollowsTheKubelet: the decision is not reused across a change
// of the kubelet's checkpoint (the memo's key holds it): a pod whose CPUs
// the kubelet takes is moved, and told why, once.
func TestDecideFollowsTheKubelet(t *testing.T) {
	redis := testWorkload("redis", 4, true, false, nil)
	obs := testObservation(redis)
	r := Decide(obs, Memory{})
	held := r.Desired.Assignments["redis"].CPUs
	obs.Kubelet = Kubelet{Policy: "static", Pinned: map[string]map[string]cpuset.CPUSet{"u": {"c": cpuset.New(held.List()[0])}}}
	r2 := Decide(obs, r.Memory)
	if moved := r2.Desired.Assignments["redis"].CPUs; moved.Contains(held.List()[0]) || moved.Size() != 4 || !r2.Save {
		t.Fatalf("redis kept %s beside the kubelet's CPU %d (save %v)", moved, held.List()[0], r2.Save)
	}
	if got := reasons(r2.Warnings); len(got) != 1 || got[0] != "KubeletCPUConflict redis" {
		t.Fatalf("warnings %v", got)
	}
	if r3 := Decide(obs, r2.Memory); r3.Save || len(r3.Warnings) > 0 || len(r3.Events) > 0 {
		t.Fatalf("deciding again: save %v, %v %v", r3.Save, r3.Events, r3.Warnings)
	}
}

// FromKubelet: the pinned CPUs by pod and container, the unnamed ones of a
// v1 checkpoint, the reserved CPUs of the configuration; an unreadable CPU
// manager checkpoint is Unknown (the decision tells it), any other file
// unreadable a problem of the node.
func TestFromKubelet(t *testing.T) {
	pinned := map[string]map[string]cpuset.CPUSet{"u1": {"app": cpuset.New(3)}}
	k, problems := FromKubelet(kubelet.State{
		CPU:    &kubelet.CPUManager{Policy: "static", Assignments: pinned, ByContainerID: map[string]cpuset.CPUSet{"c1": cpuset.New(5), "c2": cpuset.New(6)}},
		Config: &kubelet.Config{ReservedSystemCPUs: cpuset.New(0)},
		Errors: []kubelet.FileError{{Path: "/k/memory_manager_state", Reason: "bad checksum"}},
	})
	if k.Policy != "static" || !k.Pinned["u1"]["app"].Equals(cpuset.New(3)) || !k.Unnamed.Equals(cpuset.New(5, 6)) ||
		!k.Reserved.Equals(cpuset.New(0)) || k.Unknown != "" {
		t.Errorf("got %+v", k)
	}
	if len(problems) != 1 || problems[0].Reason != "KubeletFileUnreadable" ||
		problems[0].Message != "/k/memory_manager_state: bad checksum; Locus goes on without it" {
		t.Errorf("problems %+v", problems)
	}

	k, problems = FromKubelet(kubelet.State{CPUUnknown: true, Errors: []kubelet.FileError{
		{Path: "/k/cpu_manager_state", Reason: "bad checksum"}, {Path: "/k/config.yaml", Reason: "not YAML"}}})
	if k.Unknown != "/k/cpu_manager_state: bad checksum" || !k.Reserved.IsEmpty() || !k.Unnamed.IsEmpty() {
		t.Errorf("unreadable checkpoint: %+v", k)
	}
	if len(problems) != 1 || !strings.HasPrefix(problems[0].Message, "/k/config.yaml: not YAML") {
		t.Errorf("unreadable checkpoint: problems %+v", problems)
	}
}

// Memory the kubelet's static memory manager bound stays where it put it:
// Locus writes such a container's cpuset.cpus, never its cpuset.mems; the
// pod's other containers get both. Only the Static policy binds.
func TestKubeletMemoryManager(t *testing.T) {
	mem := &kubelet.MemoryManager{Policy: "Static", Assignments: map[string]map[string][]kubelet.Block{
		"uid-m": {"app": {{Resource: "memory", Bytes: 1 << 30, Nodes: []int{1}}, {Resource: "hugepages-2Mi", Bytes: 1 << 21, Nodes: []int{0}}}}}}
	for _, policy := range []string{"Static", "None"} {
		mem.Policy = policy
		kube, _ := FromKubelet(kubelet.State{Memory: mem})
		d := Compute(Input{Topology: fixture.MustBuild(fixture.Intel2S96C), Kubelet: kube,
			Workloads: []workload.Workload{pod("ns/m", "uid-m", 0, false)}})
		got := map[string]bool{}
		for _, op := range d.Ops {
			got[op.Cgroup+" "+string(op.Knob)] = true
		}
		bound := policy == "Static"
		if got["locus.slice/ns/m/app cpuset.mems"] == bound || !got["locus.slice/ns/m/app cpuset.cpus"] {
			t.Errorf("policy %s: app's cpuset ops %v", policy, got)
		}
		if !got["locus.slice/ns/m/side cpuset.mems"] || !got["locus.slice/ns/m/side cpuset.cpus"] {
			t.Errorf("policy %s: side's cpuset ops %v", policy, got)
		}
		if bound && kube.MemPinned["uid-m"]["app"] != "0-1" {
			t.Errorf("memory-bound nodes %v, want 0-1 for app", kube.MemPinned)
		}
	}
}
