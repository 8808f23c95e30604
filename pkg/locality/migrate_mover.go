//go:build linux

package locality

import (
	"context"
	"slices"
	"time"
)

// regions lists the areas worth querying: mappings with pages on a node
// the plan moves from, not held there by a memory policy, not kernel areas.
func (m *mover) regions() ([]region, error) {
	r := Reader{ProcRoot: m.opts.ProcRoot}
	mapsText, err := r.readFile(m.pid, "maps")
	if err != nil {
		return nil, err
	}
	ranges, err := ParseMaps(mapsText)
	if err != nil {
		return nil, err
	}
	pm, err := r.Process(m.pid)
	if err != nil {
		return nil, err
	}
	if len(pm.Mappings) == 0 && exited(m.opts.ProcRoot, m.pid) {
		return nil, ErrNoProcess // a zombie: it exited and has no memory left
	}
	byStart := map[uint64]Mapping{}
	for _, mp := range pm.Mappings {
		byStart[mp.Start] = mp
	}
	var out []region
	for _, rg := range ranges {
		mp, ok := byStart[rg.Start]
		if !ok || rg.Special() || mp.Policy.Holds(m.local) || !m.hasSource(mp) || m.onlyShared(mp) {
			continue
		}
		step := m.pageSize
		if mp.Huge && mp.PageSizeKB*1024 > step {
			step = mp.PageSizeKB * 1024
		}
		out = append(out, region{start: rg.Start, end: rg.End, step: step, weight: step / m.pageSize})
	}
	return out, nil
}

// onlyShared reports a mapping whose pages on source nodes are all pages an
// earlier pass found shared with other processes: another pass over it
// would move nothing.
func (m *mover) onlyShared(mp Mapping) bool {
	shared := m.sharedIn[mp.Start]
	if shared == 0 {
		return false
	}
	pages := mp.BasePages(m.pageSize / 1024)
	var remote uint64
	var seen []int
	for _, k := range m.pairs {
		if !slices.Contains(seen, k[0]) {
			seen = append(seen, k[0])
			remote += pages[k[0]]
		}
	}
	return remote <= shared
}

func (m *mover) hasSource(mp Mapping) bool {
	for k, left := range m.quota {
		if left > 0 && mp.Nodes[k[0]] > 0 {
			return true
		}
	}
	return false
}

// target picks the local node for a page on from: the one with the most
// quota left for that source. It runs once per page, so it walks the plan's
// few (source, target) pairs rather than the quota map.
func (m *mover) target(from int) (int, bool) {
	best, bestLeft := -1, uint64(0)
	for _, k := range m.pairs {
		if left := m.quota[k]; k[0] == from && left > 0 && !m.stopped[k[1]] && (left > bestLeft || left == bestLeft && k[1] < best) {
			best, bestLeft = k[1], left
		}
	}
	return best, best >= 0
}

// release gives a page's reserved quota back when it did not move, so a
// later pass may use it for another page.
func (m *mover) release(p pageRef) { m.quota[[2]int{p.from, p.to}] += p.reserved }

func (m *mover) quotaLeft() bool {
	for k, left := range m.quota {
		if left > 0 && !m.stopped[k[1]] {
			return true
		}
	}
	return false
}

func (m *mover) movedPages() uint64 {
	var n uint64
	for _, v := range m.moved {
		n += v
	}
	return n
}

func (m *mover) record(p pageRef) { m.moved[[2]int{p.from, p.to}] += p.weight }

func (m *mover) stop(node int) {
	if !m.stopped[node] {
		m.stopped[node] = true
		m.res.Stopped = append(m.res.Stopped, node)
	}
}

func (m *mover) finish() ProcessResult {
	for k, n := range m.moved {
		m.res.Moved = append(m.res.Moved, Move{From: k[0], To: k[1], Pages: n})
	}
	slices.SortFunc(m.res.Moved, func(a, b Move) int {
		if a.From != b.From {
			return a.From - b.From
		}
		return a.To - b.To
	})
	slices.Sort(m.res.Stopped)
	if m.fatal != nil {
		m.res.Err = processError(m.opts.ProcRoot, m.pid, m.fatal)
	}
	return m.res
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
