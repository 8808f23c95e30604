package execute

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/state"
)

// TestAdmittedWaitsWhileAMoveFails: the workload admitted on the CPUs a
// moved one leaves is written only once the moved one's writes succeeded.
// A moved workload whose write fails may still run on those CPUs, so the
// admitted one keeps what it had, the report names the failed move and
// why the admitted one waits (ErrMoveIncomplete, not a failed write); one whose cgroup is gone has left them,
// and the admitted one is written.
func TestAdmittedWaitsWhileAMoveFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		// breakMoved makes the moved workload's writes fail, or its
		// cgroup vanish, after the decision and before its writes.
		breakMoved func(t *testing.T, dir string)
		admitted   bool // big is written
		failedMove bool // the report names the move as failed
	}{
		{"every write succeeds", func(*testing.T, string) {}, true, false},
		{"the moved cpuset.cpus cannot be written", func(t *testing.T, dir string) {
			// A directory where the file was: reading or writing it fails
			// (EISDIR), as a kernel refusing the value (EBUSY) would.
			mustDo(t, os.Remove(filepath.Join(dir, "cpuset.cpus")), os.Mkdir(filepath.Join(dir, "cpuset.cpus"), 0o755))
		}, false, true},
		{"the moved cpuset.mems cannot be written", func(t *testing.T, dir string) {
			mustDo(t, os.Remove(filepath.Join(dir, "cpuset.mems")), os.Mkdir(filepath.Join(dir, "cpuset.mems"), 0o755))
		}, false, true},
		{"the moved workload's cgroup is gone", func(t *testing.T, dir string) {
			mustDo(t, os.RemoveAll(dir))
		}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newMoveScenario(t)
			moved := s.rd.Desired.Moves[0].Workload
			tc.breakMoved(t, filepath.Join(s.root, "pods", moved))
			ev := &events{}
			c := testConfig(t, s.h, cgroup.NewMemoryStore(), ev)
			// Saved before the writes, as the agent saves a decision.
			mustDo(t, c.Store.Update(func(ck *state.Checkpoint) error { ck.Assignments = s.rd.Desired.Assignments; return nil }))
			e := mustNew(t, c)
			tg := TargetsOf(s.obs.Workloads)
			tg.Previous = s.prev
			rep := e.Apply(s.rd, tg)

			want := s.shared
			if tc.admitted {
				want = s.rd.Desired.Assignments["big"].CPUs
			}
			if got := s.cpus(t, "pods/big"); !got.Equals(want) {
				t.Errorf("big: cpuset.cpus %s, want %s", got, want)
			}
			failed := rep.FailedMoves()
			if _, ok := failed[moved]; ok != tc.failedMove || len(failed) > 1 {
				t.Errorf("failed moves %v, want %s named: %v", failed, moved, tc.failedMove)
			}
			if rep.Failed("big") == tc.admitted {
				t.Errorf("report says big failed: %v, want %v", rep.Failed("big"), !tc.admitted)
			}
			if slices.ContainsFunc(*ev, func(e string) bool { return strings.HasPrefix(e, "CgroupWriteFailed big") }) {
				t.Errorf("big told as a failed write: %q", *ev)
			}
			ck, err := c.Store.Load()
			mustDo(t, err)
			wantKept := s.rd.Desired.Assignments
			if tc.failedMove {
				wantKept = s.prev
			}
			if !decide.SameAssignments(ck.Assignments, wantKept) {
				t.Errorf("checkpoint says %v, want %v", ck.Assignments, wantKept)
			}
			var reasons []string
			for _, p := range rep.MoveProblems() {
				reasons = append(reasons, p.Workload+"/"+p.Reason)
			}
			if wantReasons := []string{moved + "/MoveFailed", "big/MoveIncomplete"}; tc.failedMove != slices.Equal(reasons, wantReasons) {
				t.Errorf("problems %v, want %v: %v", reasons, wantReasons, tc.failedMove)
			}
			heldErr := slices.ContainsFunc(rep.Errors, func(err error) bool {
				return errors.Is(err, ErrMoveIncomplete) && strings.Contains(err.Error(), moved)
			})
			if heldErr == tc.admitted {
				t.Errorf("errors %v: ErrMoveIncomplete %v, want %v", rep.Errors, heldErr, !tc.admitted)
			}
		})
	}
}

func mustDo(t *testing.T, errs ...error) {
	t.Helper()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}
