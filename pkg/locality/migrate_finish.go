//go:build linux

package locality

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// finishWhole moves what is left of the process with migrate_pages(2), one
// call per target node, when the costs the controller learned from this
// run's move_pages calls predict that those calls together fit in half the
// budget. migrate_pages walks the page tables in the kernel instead of
// looking up each listed page, so it is at least as fast per page, and it
// saves the status queries and calls of what is left. It runs only where it does what the
// move_pages path would: each source node goes to one target, the margin
// left room for the whole plan, no memory policy holds remote pages in
// place, and (see migratePagesPrivate) pages shared with other processes
// stay. It reports whether it ran; the caller then drops rest and ends the
// pass, and what the call left is the next pass's quota.
func (m *mover) finishWhole(rest []pageRef) bool {
	if !m.whole || m.finished || m.fatal != nil {
		return false
	}
	for from, to := range m.toOf {
		if from == to {
			return false // a move in place (tests): nothing for migrate_pages to do
		}
	}
	per := max(m.ctl.PerPage(BasePages), m.ctl.PerPage(HugePages))
	if per <= 0 {
		return false // nothing learned yet
	}
	need := map[int]uint64{}       // pages still to move, by target
	planned := map[[2]int]uint64{} // and by (source, target)
	var left uint64
	for _, k := range m.pairs {
		if !m.stopped[k[1]] {
			need[k[1]] += m.quota[k]
			planned[k] += m.quota[k]
			left += m.quota[k]
		}
	}
	for _, group := range [][]pageRef{rest, m.pending} {
		for _, p := range group {
			need[p.to] += p.reserved
			planned[[2]int{p.from, p.to}] += p.reserved
			left += p.reserved
		}
	}
	if left == 0 || len(m.stopped) > 0 || time.Duration(left)*per > m.ctl.Budget/2 {
		return false
	}
	targets := slices.Sorted(maps.Keys(need))
	mem, err := m.opts.FreeMemory(targets)
	if err != nil {
		m.fatal = fmt.Errorf("read free memory of numa nodes: %w", err)
		return false
	}
	for _, t := range targets {
		nm := mem[t]
		if margin := m.opts.Margin.For(nm.Total); nm.Free < margin || (nm.Free-margin)/m.pageSize < need[t] {
			return false // the batches' guard stops at the margin instead
		}
	}
	reader := Reader{ProcRoot: m.opts.ProcRoot}
	before, err := reader.Process(m.pid)
	if err != nil {
		m.fatal = err
		return false
	}
	for _, t := range targets {
		var froms []int
		for from, to := range m.toOf {
			if to == t {
				froms = append(froms, from)
			}
		}
		slices.Sort(froms)
		start := time.Now()
		notMoved, err := migratePagesPrivate(m.pid, froms, []int{t})
		took := time.Since(start)
		// It holds the process's mmap lock for the whole call: a thread
		// that maps memory waits it out, and faults may queue behind that.
		m.res.addCall(took, took)
		if err != nil {
			m.fatal = err
			return false
		}
		m.res.Busy += uint64(notMoved)
	}
	after, err := reader.Process(m.pid)
	if err != nil {
		m.fatal = err
		return false
	}
	var moved, unmoved uint64
	for from, to := range m.toOf {
		k := [2]int{from, to}
		var gone uint64
		if b, a := before.Pages[from], after.Pages[from]; b > a {
			gone = b - a
			m.moved[k] += gone
			moved += gone
		}
		// What migrate_pages left (pages busy for a moment, or pinned) is
		// the next pass's: it finds them in numa_maps again, and moves and
		// retries them page by page like any other.
		m.quota[k] = planned[k] - min(gone, planned[k])
		unmoved += m.quota[k]
	}
	m.pending, m.whole, m.finished = nil, false, true
	m.res.Note = fmt.Sprintf("the last %d pages moved with one migrate_pages call per target", moved)
	if unmoved > 0 {
		m.res.Note += fmt.Sprintf(", up to %d left to move_pages", unmoved)
	}
	return true
}
