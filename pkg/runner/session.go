package runner

import (
	"errors"
	"fmt"
	"path"
	"time"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/execute"
	"github.com/locus-project/locus/pkg/state"
)

// Session is one run's hold on the host: its cgroup and its lease.
type Session struct {
	Host Host
	// Cgroups carries the run's cgroup out; its originals store marks the
	// cgroups this run creates.
	Cgroups *execute.Cgroups
	Store   *state.Store
	// Name keys the lease; Cgroup is <parent>/<Name>.
	Name, Cgroup string
	Owner        state.Process

	Plan Plan
	// Unsupported lists the files of the decision this kernel lacks
	// (extension files on upstream kernels); they were skipped.
	Unsupported []string
	acquired    bool
}

// DropStale removes from cp the leases of runs that died and left nothing
// running in their cgroups (see StaleLeases), and returns them by name.
func DropStale(cp *state.Checkpoint, h *cgroup.Hierarchy) map[string]state.Lease {
	busy := func(cg string) bool {
		procs, err := h.Procs(cg)
		// A missing cgroup holds nothing; any other error keeps the lease.
		return err != nil && h.Exists(cgroup.CPUSet, cg) || len(procs) > 0
	}
	dropped := map[string]state.Lease{}
	for _, name := range StaleLeases(*cp, ProcessAlive, busy) {
		dropped[name] = cp.Leases[name]
		delete(cp.Leases, name)
	}
	return dropped
}

// Acquire decides the CPUs and prepares the cgroup under the checkpoint lock,
// so the agent and concurrent runs see the lease before anyone else
// allocates: it drops stale leases, decides, creates the cgroup, writes its
// files and records the lease. On any error nothing is left behind.
func (s *Session) Acquire(req Request) error {
	if err := cgroupfile.CheckRel(s.Cgroup); err != nil {
		return fmt.Errorf("%w: cgroup %q: %v", ErrBadRequest, s.Cgroup, err)
	}
	h := s.Cgroups.Hierarchy()
	created := false
	err := s.Store.Update(func(cp *state.Checkpoint) error {
		DropStale(cp, h)
		if _, taken := cp.Leases[s.Name]; taken {
			return fmt.Errorf("a lease named %q is already held", s.Name)
		}
		d, err := PlanRun(s.Host, *cp, req, s.Cgroup)
		if err != nil {
			return err
		}
		if h.Exists(cgroup.CPUSet, s.Cgroup) || h.Exists(cgroup.Memory, s.Cgroup) {
			return fmt.Errorf("cgroup %q already exists; refusing to share it", s.Cgroup)
		}
		created = true
		if err := s.prepare(d); err != nil {
			// Undo under the lock, so a concurrent run never sees a
			// parent cgroup vanish under its feet.
			created = false
			return undo(err, s.removeCgroups())
		}
		d.Lease.Owner = s.Owner
		cp.Leases[s.Name] = d.Lease
		s.Plan = d
		return nil
	})
	if err != nil && created {
		err = undo(err, s.removeCgroups()) // the checkpoint could not be saved
	}
	s.acquired = err == nil
	return err
}

// prepare creates the cgroup and writes its files.
func (s *Session) prepare(d Plan) error {
	if _, err := s.Cgroups.Ensure(s.Cgroup); err != nil {
		return err
	}
	rep, err := s.Cgroups.Write(d.Ops)
	if err != nil {
		return err
	}
	s.Unsupported = nil
	for _, r := range rep.Results {
		if r.Outcome == cgroup.Unsupported {
			s.Unsupported = append(s.Unsupported, string(r.Knob))
		}
	}
	return nil
}

func undo(err, undoErr error) error {
	if undoErr != nil {
		return fmt.Errorf("%w (and undoing it: %v)", err, undoErr)
	}
	return err
}

// Release ends the run's hold: processes left in the cgroup (children the
// command left behind) get SIGTERM, then SIGKILL after grace; then the cgroup
// and the lease go, under the checkpoint lock.
func (s *Session) Release(grace time.Duration) error {
	if !s.acquired {
		return nil
	}
	killErr := s.emptyCgroup(grace)
	err := s.Store.Update(func(cp *state.Checkpoint) error {
		delete(cp.Leases, s.Name)
		return s.removeCgroups()
	})
	if err != nil {
		// The cgroup could not go; the lease must still be dropped, or its
		// CPUs stay taken until the agent collects it.
		_ = s.Store.Update(func(cp *state.Checkpoint) error { delete(cp.Leases, s.Name); return nil })
	}
	s.acquired = false
	return errors.Join(killErr, err)
}

// emptyCgroup signals the processes still in the run's cgroup until none is
// left or the grace periods end.
func (s *Session) emptyCgroup(grace time.Duration) error {
	h := s.Cgroups.Hierarchy()
	for _, sig := range []unix.Signal{unix.SIGTERM, unix.SIGKILL} {
		procs, err := h.Procs(s.Cgroup)
		if err != nil || len(procs) == 0 {
			return err
		}
		for _, pid := range procs {
			_ = unix.Kill(pid, sig)
		}
		if waitEmpty(h, s.Cgroup, grace) {
			return nil
		}
	}
	procs, _ := h.Procs(s.Cgroup)
	return fmt.Errorf("processes %v are still in cgroup %s after SIGKILL", procs, s.Cgroup)
}

func waitEmpty(h *cgroup.Hierarchy, cg string, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); ; time.Sleep(10 * time.Millisecond) {
		procs, err := h.Procs(cg)
		if err != nil || len(procs) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// removeCgroups removes the run's cgroup, then the ancestors this run
// created that nothing else uses any more. Called under the checkpoint lock,
// so a concurrent run never sees a parent vanish under its feet. The kernel
// may report a cgroup busy for a moment after its last task was reaped, so
// EBUSY is retried briefly.
func (s *Session) removeCgroups() error {
	var err error
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		err = s.Cgroups.Remove(s.Cgroup)
		if err == nil || errors.Is(err, cgroup.ErrNotCreated) || !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			break
		}
	}
	if errors.Is(err, cgroup.ErrNotCreated) {
		err = nil // nothing of it was created (an early failure)
	}
	if err != nil {
		return err
	}
	for p := path.Dir(s.Cgroup); p != "." && p != "/"; p = path.Dir(p) {
		// Busy or not ours: both mean it stays.
		if s.Cgroups.Remove(p) != nil {
			break
		}
	}
	return nil
}
