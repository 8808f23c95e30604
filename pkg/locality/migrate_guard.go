//go:build linux

package locality

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/procfs"
)

// guard drops the pages of a batch that would take their target node below
// the free-memory margin, read fresh, and stops moving to that node. The plan
// already respects the margin, but other processes allocate meanwhile.
func (m *mover) guard(batch []pageRef) []pageRef {
	need := map[int]bool{}
	var targets []int
	for _, p := range batch {
		if !m.stopped[p.to] && !need[p.to] {
			need[p.to] = true
			targets = append(targets, p.to)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	mem, err := m.opts.FreeMemory(targets)
	if err != nil {
		m.fatal = fmt.Errorf("read free memory of numa nodes: %w", err)
		return nil
	}
	room := map[int]uint64{}
	for _, t := range targets {
		nm := mem[t]
		if margin := m.opts.Margin.For(nm.Total); nm.Free > margin {
			room[t] = (nm.Free - margin) / m.pageSize
		}
	}
	var out []pageRef
	for _, p := range batch {
		if m.stopped[p.to] {
			continue
		}
		if room[p.to] < p.weight {
			m.stop(p.to)
			continue
		}
		room[p.to] -= p.weight
		out = append(out, p)
	}
	return out
}

// processError words why a process failed. The kernel answers EINVAL, not
// ESRCH, for a process that has exited but is not yet reaped (it has no
// memory left), so a process that is gone or a zombie is "No such process"
// whatever the call said.
func processError(procRoot string, pid int, err error) string {
	if errors.Is(err, ErrNoProcess) {
		return Strerror(ErrNoProcess)
	}
	if exited(procRoot, pid) {
		return Strerror(ErrNoProcess)
	}
	if errors.Is(err, unix.EACCES) {
		return Strerror(err) + " (a target numa node is outside the process's cpuset.mems)"
	}
	return Strerror(err)
}

// exited reports a process that is gone or a zombie.
func exited(procRoot string, pid int) bool {
	st, err := procfs.New(procRoot).Stat(pid)
	return err != nil || !st.Running()
}
