//go:build linux

package locality

import (
	"context"
	"errors"
	"math"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// ProcessResult is what happened to one process.
type ProcessResult struct {
	PID      int
	Strategy Strategy
	Moved    []Move // pages moved, by source and target node
	Skipped  string
	Err      string // why the process failed, worded as strerror(3)
	// Stopped lists local nodes where the free-memory margin (or the
	// kernel's ENOMEM) ended the move.
	Stopped []int
	Busy    uint64 // pages still busy after every retry
	Shared  uint64 // pages mapped by other processes too, left in place
	// Unhidden counts pages the kernel's NUMA balancing had hidden from
	// move_pages, touched so they could move (see migrate_hidden.go).
	Unhidden uint64
	Note     string
	Calls    int
	// LongestStall is the longest single move call.
	LongestStall time.Duration
}

// statusUnknown marks status slots the kernel did not fill: move_pages stops
// at the first group of pages that fails to migrate and leaves the rest of
// the array as it was.
const statusUnknown = math.MinInt32

// queryChunk is how many addresses one status query covers.
const queryChunk = 4096

type pageRef struct {
	addr     uintptr
	from, to int
	weight   uint64 // base pages (512 for a 2 MiB hugetlb page)
	reserved uint64 // quota taken for it (the weight, or what was left)
}

type region struct {
	start, end, step uint64
	weight           uint64
}

type mover struct {
	ctx      context.Context
	pid      int
	local    []int
	opts     Options
	ctl      *BatchController
	pageSize uint64
	quota    map[[2]int]uint64 // (from, to) -> pages still to move
	moved    map[[2]int]uint64
	stopped  map[int]bool
	shared   map[uintptr]bool // pages other processes map too, found EACCES
	// balancing: the kernel's NUMA balancing is on and may hide pages.
	balancing bool
	res       ProcessResult
	fatal     error
}

func moveProcess(ctx context.Context, pp ProcessPlan, local []int, opts Options, ctl *BatchController) ProcessResult {
	m := &mover{ctx: ctx, pid: pp.PID, local: local, opts: opts, ctl: ctl, pageSize: uint64(os.Getpagesize()),
		quota: map[[2]int]uint64{}, moved: map[[2]int]uint64{}, stopped: map[int]bool{}, shared: map[uintptr]bool{},
		res: ProcessResult{PID: pp.PID, Strategy: StrategyMovePages}}
	for _, mv := range pp.Moves {
		m.quota[[2]int{mv.From, mv.To}] += mv.Pages
	}
	// Several passes, each over the areas numa_maps still shows on a source
	// node: pages the kernel is busy with (NUMA balancing migrating or
	// splitting them, a huge page being collapsed) answer the status query
	// with an error for a moment, and are picked up by a later pass.
	m.balancing = numaBalancing(opts.ProcRoot)
	for pass := 0; pass < maxPasses && m.fatal == nil && m.quotaLeft(); pass++ {
		if pass > 0 {
			if err := sleep(ctx, passPause); err != nil {
				m.fatal = err
				break
			}
		}
		before := m.movedPages()
		m.res.Busy = m.pass()
		if pass > 0 && m.movedPages() == before {
			break // no progress: what is left will not move now
		}
	}
	return m.finish()
}

// Passes over a process, while each moves something, and the pause between
// them.
const (
	maxPasses = 8
	passPause = 100 * time.Millisecond
)

// pass queries and moves every candidate area once, retries busy pages, and
// returns how many pages stayed busy.
func (m *mover) pass() uint64 {
	regions, err := m.regions()
	if err != nil {
		m.fatal = err
		return 0
	}
	var busy []pageRef
	for _, rg := range regions {
		for addr := rg.start; addr < rg.end && m.fatal == nil; {
			n := min(uint64(queryChunk), (rg.end-addr)/rg.step)
			if n == 0 {
				break // a tail shorter than one page
			}
			busy = append(busy, m.move(m.assign(addr, n, rg))...)
			addr += n * rg.step
		}
	}
	for try := 1; try <= m.opts.Retries && len(busy) > 0 && m.fatal == nil; try++ {
		if err := sleep(m.ctx, time.Duration(try)*5*time.Millisecond); err != nil {
			m.fatal = err
			break
		}
		busy = m.retry(busy)
	}
	var left uint64
	for _, p := range busy {
		left += p.weight
		m.release(p)
	}
	return left
}

// assign queries n pages from addr and gives each page on a source node the
// target with the most quota left for that source.
func (m *mover) assign(addr uint64, n uint64, rg region) []pageRef {
	addrs := make([]uintptr, n)
	for i := range addrs {
		addrs[i] = uintptr(addr + uint64(i)*rg.step)
	}
	status := make([]int32, n)
	if err := queryPages(m.pid, addrs, status); err != nil {
		m.fatal = err
		return nil
	}
	if rg.weight == 1 {
		m.unhide(addrs, status) // hugetlb areas are never PROT_NONE-sampled
	}
	var out []pageRef
	for i, st := range status {
		if st < 0 || m.shared[addrs[i]] {
			continue
		}
		if to, ok := m.target(int(st)); ok {
			k := [2]int{int(st), to}
			r := min(m.quota[k], rg.weight)
			m.quota[k] -= r
			out = append(out, pageRef{addr: addrs[i], from: int(st), to: to, weight: rg.weight, reserved: r})
		}
	}
	return out
}

// move moves pages in batches sized by the controller and returns those
// still busy.
func (m *mover) move(pages []pageRef) []pageRef {
	var busy []pageRef
	for i := 0; i < len(pages) && m.fatal == nil; {
		if err := m.ctx.Err(); err != nil {
			m.fatal = err
			break
		}
		n := min(m.ctl.Size(), len(pages)-i)
		batch := m.guard(pages[i : i+n])
		i += n
		if len(batch) == 0 {
			continue
		}
		addrs, nodes, status := make([]uintptr, len(batch)), make([]int32, len(batch)), make([]int32, len(batch))
		for j, p := range batch {
			addrs[j], nodes[j], status[j] = p.addr, int32(p.to), statusUnknown
		}
		if m.balancing {
			// The scanner keeps hiding pages; touch them right before the
			// move so the window is too short for it.
			if err := touchPages(m.pid, addrs); err != nil {
				m.fatal = err
				break
			}
		}
		start := time.Now()
		err := movePages(m.pid, addrs, nodes, status, mpolMFMove)
		took := time.Since(start)
		m.ctl.Observe(len(batch), took)
		m.res.Calls++
		m.res.LongestStall = max(m.res.LongestStall, took)
		if errors.Is(err, unix.ENOMEM) {
			for _, p := range batch {
				m.stop(p.to)
				m.release(p)
			}
			continue
		}
		if err != nil {
			m.fatal = err
			break
		}
		var verify []pageRef
		for j, p := range batch {
			switch st := status[j]; {
			case st == int32(p.to):
				m.record(p)
			case st == -int32(unix.ENOMEM):
				m.stop(p.to)
				m.release(p)
			case st == -int32(unix.EACCES):
				// Mapped by other processes too: left for them (MPOL_MF_MOVE).
				m.shared[p.addr] = true
				m.res.Shared += p.weight
				m.release(p)
			case st == -int32(unix.ENOENT) || st == -int32(unix.EFAULT):
				// Unmapped, or in flux in the kernel: a later pass looks again.
				m.release(p)
			default:
				// EBUSY, EAGAIN, not reported: the kernel may still have
				// moved the page, so ask again rather than trust this status.
				verify = append(verify, p)
			}
		}
		busy = append(busy, m.verify(verify)...)
	}
	return busy
}

// verify re-queries pages and records those now on their target; pages
// still on their source come back for another try.
func (m *mover) verify(pages []pageRef) []pageRef {
	var again []pageRef
	for i := 0; i < len(pages) && m.fatal == nil; i += queryChunk {
		chunk := pages[i:min(i+queryChunk, len(pages))]
		addrs, status := make([]uintptr, len(chunk)), make([]int32, len(chunk))
		for j, p := range chunk {
			addrs[j] = p.addr
		}
		if err := queryPages(m.pid, addrs, status); err != nil {
			m.fatal = err
			return nil
		}
		for j, p := range chunk {
			switch int(status[j]) {
			case p.to:
				m.record(p)
			case p.from:
				again = append(again, p)
			default:
				m.release(p)
			}
		}
	}
	return again
}

func (m *mover) retry(busy []pageRef) []pageRef {
	still := m.verify(busy)
	var live []pageRef
	for _, p := range still {
		if m.stopped[p.to] {
			m.release(p)
		} else {
			live = append(live, p)
		}
	}
	return m.move(live)
}
