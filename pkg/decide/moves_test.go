package decide

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// twoNodes16 is 2 nodes of 4 cores of 2 threads: node 0 is CPUs 0-7, node 1
// is 8-15, each core two adjacent ids.
var twoNodes16 = fixture.Shape{Name: "2n-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 4, ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 << 30}

var moveNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fragmented is x and y holding half of each node, big needing a whole node
// (a name before theirs, so that its writes would come first by name),
// with the switch as given; movable names the workloads opted in.
func fragmented(enabled bool, movable ...string) (Observation, Memory) {
	cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(), BEPool: cpuset.New(), MovesEnabled: enabled}
	obs := Observation{Topology: fixture.MustBuild(twoNodes16), Config: cfg, Prepared: map[string]bool{}, Now: moveNow}
	mem := Memory{Assignments: map[string]workload.Assignment{}}
	for _, w := range []struct {
		name string
		cpus int
		held cpuset.CPUSet
	}{{"x", 4, cpuset.New(0, 1, 2, 3)}, {"y", 4, cpuset.New(8, 9, 10, 11)}, {"big", 8, cpuset.New()}} {
		wl := testWorkload(w.name, w.cpus, true, false, nil)
		wl.CPU.Memory = cpualloc.Memory{Bytes: 1 << 30}
		wl.Movable = slices.Contains(movable, w.name)
		obs.Workloads = append(obs.Workloads, wl)
		obs.Prepared[wl.Cgroup] = true
		if !w.held.IsEmpty() {
			mem.Assignments[w.name] = workload.Assignment{CPUs: w.held, Policy: wl.CPU.Policy, Memory: wl.CPU.Memory}
		}
	}
	return obs, mem
}

func TestDecideMoves(t *testing.T) {
	for _, tc := range []struct {
		name    string
		enabled bool
		movable []string
		moved   map[string]time.Time // Memory.Moved
		want    map[string]string    // CPUs after
		repin   []string             // workloads told Repinned
		// unprepared names a workload whose cgroup is not written this time.
		unprepared string
	}{{
		name: "fits only with a move", enabled: true, movable: []string{"x", "y"},
		want: map[string]string{"x": "12-15", "y": "8-11", "big": "0-7"}, repin: []string{"x"},
	}, {
		name: "the switch off: placed across both nodes as before", movable: []string{"x", "y"},
		want: map[string]string{"x": "0-3", "y": "8-11", "big": "4-7,12-15"},
	}, {
		name: "an immovable workload in the way: the other moves", enabled: true, movable: []string{"y"},
		want: map[string]string{"x": "0-3", "y": "4-7", "big": "8-15"}, repin: []string{"y"},
	}, {
		name: "nothing movable: no move", enabled: true,
		want: map[string]string{"x": "0-3", "y": "8-11", "big": "4-7,12-15"},
	}, {
		name: "a cgroup not written this time: not moved", enabled: true, movable: []string{"x", "y"}, unprepared: "x",
		want: map[string]string{"x": "0-3", "y": "4-7", "big": "8-15"}, repin: []string{"y"},
	}, {
		name: "moved recently: not moved again", enabled: true, movable: []string{"x", "y"},
		moved: map[string]time.Time{"x": moveNow.Add(-time.Minute), "y": moveNow.Add(-MoveInterval + time.Second)},
		want:  map[string]string{"x": "0-3", "y": "8-11", "big": "4-7,12-15"},
	}, {
		name: "moved long enough ago: may move again", enabled: true, movable: []string{"x", "y"},
		moved: map[string]time.Time{"x": moveNow.Add(-MoveInterval), "y": moveNow.Add(-time.Minute)},
		want:  map[string]string{"x": "12-15", "y": "8-11", "big": "0-7"}, repin: []string{"x"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			obs, mem := fragmented(tc.enabled, tc.movable...)
			mem.Moved = tc.moved
			delete(obs.Prepared, "locus.slice/"+tc.unprepared)
			r := Decide(obs, mem)
			for name, want := range tc.want {
				if got := r.Desired.Assignments[name].CPUs.String(); got != want {
					t.Errorf("%s: CPUs %s, want %s (all %v)", name, got, want, r.Desired.Assignments)
				}
			}
			var repinned []string
			for _, e := range r.Events {
				if e.Reason == ReasonRepinned {
					repinned = append(repinned, e.Workload)
					if e.Type != eventlog.Normal || !strings.Contains(e.Message, "so that big fits") || !strings.Contains(e.Message, "memory follows") {
						t.Errorf("Repinned: %+v", e)
					}
				}
				if e.Reason == "CPUsAssigned" && slices.Contains(tc.repin, e.Workload) {
					t.Errorf("a moved workload is told CPUsAssigned too: %+v", e)
				}
			}
			if !slices.Equal(repinned, tc.repin) {
				t.Errorf("Repinned %v, want %v", repinned, tc.repin)
			}
			for _, name := range tc.repin {
				if !r.Memory.Moved[name].Equal(moveNow) {
					t.Errorf("%s moved at %v, want %v remembered", name, r.Memory.Moved[name], moveNow)
				}
			}
			if len(tc.repin) > 0 && !r.Save {
				t.Error("moves not saved")
			}
		})
	}
}

// TestDecideMovesMemory: a moved workload's memory is held on its new node
// and allowed there, and on the node it left until it has followed
// (moves_mems.go; pkg/execute writes its cgroup before the admitted
// workload's).
func TestDecideMovesMemory(t *testing.T) {
	obs, mem := fragmented(true, "x", "y")
	r := Decide(obs, mem)
	for _, st := range r.Desired.Workloads {
		if st.Name == "x" && (st.Mems != "0-1" || st.MemoryByNode[1].Bytes != 1<<30 || st.MemoryByNode[0].Bytes != 0) {
			t.Errorf("moved x: mems %q, memory by node %v; want all held on node 1, allowed on both", st.Mems, st.MemoryByNode)
		}
	}
}

// TestDecideMovesRestartConverges: deciding again from the checkpoint the
// moves were saved in, as a restarted agent does (no memory but what the
// checkpoint keeps), or with the memory kept, changes nothing but, once
// MemsFollowBound has passed, the moved workload's cpuset.mems narrowed.
func TestDecideMovesRestartConverges(t *testing.T) {
	obs, mem := fragmented(true, "x", "y")
	first := Decide(obs, mem)
	if len(first.Desired.Moves) != 1 {
		t.Fatalf("moves %v, want one", first.Desired.Moves)
	}
	restarted := Memory{}.From(first.Kept())
	later := obs
	later.Now = moveNow.Add(2 * MoveInterval) // the rate limit forgotten too
	for name, m := range map[string]Memory{"restarted": restarted, "kept": first.Memory} {
		for _, o := range []Observation{obs, later} {
			again := Decide(o, m)
			if o.Now.Equal(later.Now) { // the bound passed: narrowed, and saved
				if want := []string{ReasonMemsNarrowed + " x"}; !slices.Equal(reasons(again.Events), want) || !again.Save {
					t.Errorf("%s at %v: events %v save %v, want %v saved", name, o.Now, reasons(again.Events), again.Save, want)
				}
				again.Save, again.Events = false, nil
			}
			if again.Save || len(again.Events) > 0 || len(again.Desired.Moves) > 0 {
				t.Errorf("%s at %v: save %v, events %v, moves %v", name, o.Now, again.Save, reasons(again.Events), again.Desired.Moves)
			}
			if !SameAssignments(first.Desired.Assignments, again.Desired.Assignments) {
				t.Errorf("%s: assignments %v, want %v", name, again.Desired.Assignments, first.Desired.Assignments)
			}
		}
	}
}

// TestDecideMovesRefusalSaysWhy: a workload that fits nowhere, moves or not,
// is refused as before, and the refusal says why no moves made room.
func TestDecideMovesRefusalSaysWhy(t *testing.T) {
	obs, mem := fragmented(true, "x", "y")
	obs.Workloads[2].CPU.CPUs = 12 // big: more than the 8 free
	r := Decide(obs, mem)
	var msg string
	for _, p := range r.Problems {
		if p.Workload == "big" && p.Reason == ReasonCPUAllocationFailed {
			msg = p.Message
		}
	}
	if !strings.Contains(msg, "no moves make room") || len(r.Desired.Moves) > 0 {
		t.Errorf("refusal %q, moves %v; want it to say why no moves made room", msg, r.Desired.Moves)
	}
}

// TestRepinnedMessageIsBounded: the CPU lists of a big machine do not make
// an Event's message unbounded.
func TestRepinnedMessageIsBounded(t *testing.T) {
	var every []int
	for id := 0; id < 4096; id += 2 {
		every = append(every, id)
	}
	m := Move{For: "big", ForNodes: []int{0}}
	m.Workload, m.From, m.To = "x", cpuset.New(every...), cpuset.New(every...)
	if got := repinnedMessage(m); len(got) > maxEventMessage || !strings.HasSuffix(got, "...") {
		t.Errorf("message of %d bytes, want at most %d, cut with ...", len(got), maxEventMessage)
	}
}

// BenchmarkDecideWithMove is one decision that moves a workload so that
// another fits, from scratch (no memo).
func BenchmarkDecideWithMove(b *testing.B) {
	obs, mem := fragmented(true, "x", "y")
	for b.Loop() {
		if r := Decide(obs, mem); len(r.Desired.Moves) != 1 {
			b.Fatal("no move")
		}
	}
}

// BenchmarkDecideWithoutMove is the same decision with the switch off.
func BenchmarkDecideWithoutMove(b *testing.B) {
	obs, mem := fragmented(false, "x", "y")
	for b.Loop() {
		Decide(obs, mem)
	}
}
