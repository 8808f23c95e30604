package decide

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/workload"
)

// TestMovesMemsFollow: a move widens the moved workload's cpuset.mems to
// the node it left and the one it goes to, and a later reconcile narrows it
// once what is resident outside is at most MemsLeftToNarrow, or once
// MemsFollowBound has passed, whatever its memory says; an agent restarted
// in between does the same from the checkpoint.
func TestMovesMemsFollow(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name      string
		after     time.Duration           // since the move
		resident  map[int]uint64          // x's, read at the later reconcile
		restarted bool                    // the later reconcile's memory is the checkpoint's only
		removed   bool                    // x gone by the later reconcile
		want      string                  // x's cpuset.mems then; "" for none written
		narrowed  bool                    // told MemsNarrowed
		following bool                    // still widened after it
		mutate    func(*Observation)      // more of the later observation
		check     func(*testing.T, Ready) // more of the later decision
	}{
		{name: "most still on the node left: wide", after: time.Minute, resident: map[int]uint64{0: 100 * mib, 1: 10 * mib}, want: "0-1", following: true},
		{name: "resident not read: wide until the bound", after: time.Minute, want: "0-1", following: true},
		{name: "4 MiB left: narrowed", after: time.Minute, resident: map[int]uint64{0: 4 * mib, 1: 100 * mib}, want: "1", narrowed: true},
		{name: "a byte more than 4 MiB: wide", after: time.Minute, resident: map[int]uint64{0: 4*mib + 1}, want: "0-1", following: true},
		{name: "the bound passed: narrowed whatever is left", after: MemsFollowBound, resident: map[int]uint64{0: 100 * mib}, want: "1", narrowed: true,
			check: func(t *testing.T, r Ready) {
				if msg := eventOf(r, ReasonMemsNarrowed); !strings.Contains(msg, "104857600 bytes left outside") {
					t.Errorf("MemsNarrowed says %q, want the bytes left", msg)
				}
			}},
		{name: "the bound passed, nothing read: narrowed", after: MemsFollowBound + time.Second, want: "1", narrowed: true},
		{name: "clock gone back: narrowed", after: -time.Minute, resident: map[int]uint64{0: 100 * mib}, want: "1", narrowed: true},
		{name: "restarted, most still on the node left: wide", after: time.Minute, restarted: true, resident: map[int]uint64{0: 100 * mib}, want: "0-1", following: true},
		{name: "restarted, memory followed: narrowed", after: time.Minute, restarted: true, resident: map[int]uint64{1: 100 * mib}, want: "1", narrowed: true},
		{name: "removed meanwhile: forgotten", after: time.Minute, removed: true, resident: map[int]uint64{0: 100 * mib}},
		{name: "the big workload's cpuset.mems is never widened", after: time.Minute, resident: map[int]uint64{0: 100 * mib}, want: "0-1", following: true,
			check: func(t *testing.T, r Ready) {
				if v, _ := opValue(r.Desired.Ops, "locus.slice/big", cgroupfile.CPUSetMems); v != "0" {
					t.Errorf("big's cpuset.mems %q, want 0", v)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, mem := fragmented(true, "x", "y")
			first := Decide(obs, mem)
			if len(first.Desired.Moves) != 1 || first.Desired.Moves[0].Workload != "x" {
				t.Fatalf("moves %+v, want x's", first.Desired.Moves)
			}
			if v, _ := opValue(first.Desired.Ops, "locus.slice/x", cgroupfile.CPUSetMems); v != "0-1" {
				t.Errorf("at the move x's cpuset.mems %q, want 0-1 (the node left and the new one)", v)
			}
			if v, _ := opValue(first.Desired.Ops, "locus.slice/x", cgroupfile.CPUSetCPUs); v != "12-15" {
				t.Errorf("at the move x's cpuset.cpus %q, want its new CPUs 12-15", v)
			}
			if f := first.Memory.Following["x"]; !first.Save || !slices.Equal(f.Wide, []int{0, 1}) || !f.Since.Equal(moveNow) {
				t.Errorf("at the move: save %v, following %+v", first.Save, first.Memory.Following)
			}
			if st := stateOf(first, "x"); st.Mems != "0-1" || !slices.Equal(st.NUMANodes, []int{1}) {
				t.Errorf("at the move x's status mems %q nodes %v, want 0-1 and [1]", st.Mems, st.NUMANodes)
			}
			later := laterObservation(obs, tc.after, tc.resident, tc.removed)
			if tc.mutate != nil {
				tc.mutate(&later)
			}
			r := Decide(later, laterMemory(first, tc.restarted))
			got, _ := opValue(r.Desired.Ops, "locus.slice/x", cgroupfile.CPUSetMems)
			if got != tc.want {
				t.Errorf("x's cpuset.mems %q, want %q", got, tc.want)
			}
			if told := eventOf(r, ReasonMemsNarrowed) != ""; told != tc.narrowed {
				t.Errorf("MemsNarrowed told %v, want %v (events %v)", told, tc.narrowed, reasons(r.Events))
			}
			if _, ok := r.Memory.Following["x"]; ok != tc.following {
				t.Errorf("still following %v, want %v", ok, tc.following)
			}
			if changed := tc.narrowed || tc.removed; r.Save != changed {
				t.Errorf("save %v, want %v", r.Save, changed)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// TestMovesMemsUnrestricted: with unrestrictedMems, cpuset.mems is every
// node before a move and after: nothing is widened or followed.
func TestMovesMemsUnrestricted(t *testing.T) {
	obs, mem := fragmented(true, "x", "y")
	obs.Config.Host.UnrestrictedMems = true
	r := Decide(obs, mem)
	if len(r.Desired.Moves) != 1 {
		t.Fatalf("moves %+v, want one", r.Desired.Moves)
	}
	if v, _ := opValue(r.Desired.Ops, "locus.slice/x", cgroupfile.CPUSetMems); v != "0-1" || r.Memory.Following != nil {
		t.Errorf("x's cpuset.mems %q, following %v; want 0-1 and none", v, r.Memory.Following)
	}
	later := obs
	later.Now = moveNow.Add(MemsFollowBound)
	if again := Decide(later, r.Memory); eventOf(again, ReasonMemsNarrowed) != "" || again.Save {
		t.Errorf("later: events %v, save %v", reasons(again.Events), again.Save)
	}
}

func eventOf(r Ready, reason string) string {
	for _, e := range r.Events {
		if e.Reason == reason {
			return e.Message
		}
	}
	return ""
}

func stateOf(r Ready, name string) WorkloadState {
	for _, st := range r.Desired.Workloads {
		if st.Name == name {
			return st
		}
	}
	return WorkloadState{}
}

// TestMovesMemsFollowedAfterRestart: an agent restarted after a move knows
// the moved workload only from the checkpoint's widened ones, and the memory
// locality worker is still given it.
func TestMovesMemsFollowedAfterRestart(t *testing.T) {
	obs, mem := fragmented(true, "x", "y")
	first := Decide(obs, mem)
	if got := first.Memory.Followed(); !slices.Equal(got, []string{"x"}) {
		t.Errorf("followed at the move %v, want [x]", got)
	}
	if got := (Memory{}).From(first.Kept()).Followed(); !slices.Equal(got, []string{"x"}) {
		t.Errorf("followed after a restart %v, want [x]", got)
	}
}

// laterObservation is obs at a reconcile after x's move: x's resident
// memory as given (nil: none read), x gone if removed.
func laterObservation(obs Observation, after time.Duration, resident map[int]uint64, removed bool) Observation {
	later := obs
	later.Now = moveNow.Add(after)
	later.Resident = nil
	if resident != nil {
		later.Resident = map[string]map[int]uint64{"x": resident}
	}
	if removed {
		later.Workloads = slices.DeleteFunc(slices.Clone(obs.Workloads), func(w workload.Workload) bool { return w.Name == "x" })
	}
	return later
}

// laterMemory is what the later reconcile remembers of the move: the
// decision's own memory, or only the checkpoint's after a restart.
func laterMemory(first Ready, restarted bool) Memory {
	if restarted {
		return Memory{}.From(first.Kept())
	}
	return first.Memory
}
