//go:build linux

package locality

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/procfs"
)

// guard drops the pages of a batch that would take their target node below
// the free-memory margin and stops moving to that node. The plan already
// respects the margin, but other processes allocate meanwhile, so the room
// is read again at least every guardRefresh and before every batch once it
// comes within guardSlack of the margin. (Reading a node's meminfo costs
// about as much as moving a huge page under emulation, so not before every
// batch.)
func (m *mover) guard(batch []pageRef) []pageRef {
	var need uint64
	var targets []int
	for _, p := range batch {
		if !m.stopped[p.to] && !slices.Contains(targets, p.to) {
			targets = append(targets, p.to)
		}
		need += p.weight
	}
	if len(targets) == 0 {
		return nil
	}
	fresh := time.Since(m.roomAt) < guardRefresh
	for _, t := range targets {
		room, known := m.room[t]
		fresh = fresh && known && room >= need+guardSlack/m.pageSize
	}
	if !fresh {
		mem, err := m.opts.FreeMemory(targets)
		if err != nil {
			m.fatal = fmt.Errorf("read free memory of numa nodes: %w", err)
			return nil
		}
		m.room, m.roomAt = map[int]uint64{}, time.Now()
		for _, t := range targets {
			nm := mem[t]
			if margin := m.opts.Margin.For(nm.Total); nm.Free > margin {
				m.room[t] = (nm.Free - margin) / m.pageSize
			} else {
				m.room[t] = 0
			}
		}
	}
	var out []pageRef
	for _, p := range batch {
		if m.stopped[p.to] {
			continue
		}
		if m.room[p.to] < p.weight {
			m.stop(p.to)
			continue
		}
		m.room[p.to] -= p.weight
		out = append(out, p)
	}
	return out
}

// How stale the free memory the guard goes by may be.
const (
	guardRefresh = 250 * time.Millisecond
	guardSlack   = 64 << 20
)

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
