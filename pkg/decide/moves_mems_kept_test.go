package decide

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroupfile"
)

// TestMovesMemsKeptWideWhereNarrowingMigrates: where the kernel migrates
// inside a narrowing cpuset.mems write (cgroup v2), a moved workload's
// widened cpuset.mems is never narrowed while it runs, whatever is left
// outside and however long since the move, before a restart and after;
// the move tells why once (MemsKeptWide), and the memory locality worker
// keeps following it. A workload removed is forgotten as before.
func TestMovesMemsKeptWideWhereNarrowingMigrates(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name      string
		after     time.Duration  // since the move
		resident  map[int]uint64 // x's, read at the later reconcile
		restarted bool           // the later reconcile's memory is the checkpoint's only
		removed   bool           // x gone by the later reconcile
		want      string         // x's cpuset.mems then; "" for none written
	}{
		{name: "memory followed: wide", after: time.Minute, resident: map[int]uint64{1: 100 * mib}, want: "0-1"},
		{name: "4 MiB left: wide", after: time.Minute, resident: map[int]uint64{0: 4 * mib, 1: 100 * mib}, want: "0-1"},
		{name: "the bound passed: wide", after: MemsFollowBound, resident: map[int]uint64{0: 100 * mib}, want: "0-1"},
		{name: "the bound passed, nothing read: wide", after: MemsFollowBound + time.Hour, want: "0-1"},
		{name: "clock gone back: wide", after: -time.Minute, resident: map[int]uint64{1: 100 * mib}, want: "0-1"},
		{name: "restarted, memory followed: wide", after: time.Minute, restarted: true, resident: map[int]uint64{1: 100 * mib}, want: "0-1"},
		{name: "removed meanwhile: forgotten", after: time.Minute, removed: true, resident: map[int]uint64{1: 100 * mib}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, mem := fragmented(true, "x", "y")
			obs.NarrowingMigrates = true
			first := Decide(obs, mem)
			if len(first.Desired.Moves) != 1 || first.Desired.Moves[0].Workload != "x" {
				t.Fatalf("moves %+v, want x's", first.Desired.Moves)
			}
			if v, _ := opValue(first.Desired.Ops, "locus.slice/x", cgroupfile.CPUSetMems); v != "0-1" {
				t.Errorf("at the move x's cpuset.mems %q, want 0-1", v)
			}
			msg := eventOf(first, ReasonMemsKeptWide)
			for _, part := range []string{"NUMA nodes [0 1]", "inside the write", "mmap lock", "[1]"} {
				if !strings.Contains(msg, part) {
					t.Errorf("at the move MemsKeptWide %q, want it to say %q", msg, part)
				}
			}
			r := Decide(laterObservation(obs, tc.after, tc.resident, tc.removed), laterMemory(first, tc.restarted))
			if got, _ := opValue(r.Desired.Ops, "locus.slice/x", cgroupfile.CPUSetMems); got != tc.want {
				t.Errorf("x's cpuset.mems %q, want %q", got, tc.want)
			}
			if st := stateOf(r, "x"); !tc.removed && st.Mems != "0-1" {
				t.Errorf("x's status mems %q, want 0-1", st.Mems)
			}
			for _, reason := range []string{ReasonMemsNarrowed, ReasonMemsKeptWide} {
				if msg := eventOf(r, reason); msg != "" {
					t.Errorf("later told %s %q, want nothing new", reason, msg)
				}
			}
			if _, ok := r.Memory.Following["x"]; ok == tc.removed {
				t.Errorf("still following %v, want %v", ok, !tc.removed)
			}
			if followed := slices.Contains(r.Memory.Followed(), "x"); !tc.removed && !followed {
				t.Errorf("the memory locality worker no longer follows x")
			}
			if r.Save != tc.removed {
				t.Errorf("save %v, want %v", r.Save, tc.removed)
			}
		})
	}
}

// TestMovesMemsNarrowedWhereNarrowingMigratesNothing: without the kernel's
// migration in the write (cgroup v1, memory_migrate off) the move tells no
// MemsKeptWide and the narrowing is as before.
func TestMovesMemsNarrowedWhereNarrowingMigratesNothing(t *testing.T) {
	obs, mem := fragmented(true, "x", "y")
	first := Decide(obs, mem)
	if msg := eventOf(first, ReasonMemsKeptWide); msg != "" {
		t.Errorf("at the move MemsKeptWide %q, want none", msg)
	}
	later := obs
	later.Now = moveNow.Add(time.Minute)
	later.Resident = map[string]map[int]uint64{"x": {1: 1 << 30}}
	if r := Decide(later, first.Memory); eventOf(r, ReasonMemsNarrowed) == "" {
		t.Errorf("memory followed: events %v, want MemsNarrowed", reasons(r.Events))
	}
}
