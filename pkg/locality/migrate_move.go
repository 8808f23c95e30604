//go:build linux

package locality

import (
	"context"
	"math"
	"os"
	"slices"
	"time"
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
	// LongestStall is the longest wait a call caused (Result.LongestStall),
	// LongestCall the longest call, CallTime all of them.
	LongestStall time.Duration
	LongestCall  time.Duration
	CallTime     time.Duration
	stalls       []time.Duration // each call's wait
}

// statusUnknown marks status slots the kernel did not fill: move_pages stops
// at the first group of pages that fails to migrate and leaves the rest of
// the array as it was.
const statusUnknown = math.MinInt32

// queryChunk is how many addresses one status query covers.
const queryChunk = 4096

type pageRef struct {
	addr     uintptr
	area     uint64 // start of its mapping
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
	pairs    [][2]int          // the keys of quota, in plan order
	moved    map[[2]int]uint64
	stopped  map[int]bool
	shared   map[uintptr]bool  // pages other processes map too, found EACCES
	sharedIn map[uint64]uint64 // base pages found shared, by mapping start
	// balancing: the kernel's NUMA balancing is on and may hide pages.
	balancing bool
	// kpageflags finds THP heads; nil where it cannot be read.
	kpageflags *os.File
	res        ProcessResult
	fatal      error
	// Buffers reused from call to call.
	addrBuf          []uintptr
	nodeBuf, statBuf []int32
	pmBuf            []byte
	// pending pages wait for more of their class to fill a batch.
	pending []pageRef
	// whole: migrate_pages(2) may finish the process (see migrate_finish.go);
	// toOf maps each source node to its target; finished: it did, and the
	// pass ends there (the next one picks up what it left).
	whole    bool
	toOf     map[int]int
	finished bool
	// room is what each target node could take above its margin when read
	// at roomAt, less what was moved there since.
	room   map[int]uint64
	roomAt time.Time
}

// moveProcess moves pp's pages; with the kernel's NUMA balancing on, from
// the CPUs of the nodes they go to (migrate_touchcpu.go).
func moveProcess(ctx context.Context, pp ProcessPlan, plan Plan, opts Options, ctl *BatchController) ProcessResult {
	balancing := numaBalancing(opts.ProcRoot)
	if !balancing {
		return moveProcessHere(ctx, pp, plan, opts, ctl, false)
	}
	var pr ProcessResult
	onLocalCPUs(opts.SysfsRoot, plan.Local, func() { pr = moveProcessHere(ctx, pp, plan, opts, ctl, true) })
	return pr
}

func moveProcessHere(ctx context.Context, pp ProcessPlan, plan Plan, opts Options, ctl *BatchController, balancing bool) ProcessResult {
	m := &mover{ctx: ctx, pid: pp.PID, local: plan.Local, opts: opts, ctl: ctl, pageSize: uint64(os.Getpagesize()),
		whole: wholeRefused(pp, plan) == "", toOf: targetOf(pp),
		quota: map[[2]int]uint64{}, moved: map[[2]int]uint64{}, stopped: map[int]bool{}, shared: map[uintptr]bool{}, sharedIn: map[uint64]uint64{},
		res: ProcessResult{PID: pp.PID, Strategy: StrategyMovePages}}
	for _, mv := range pp.Moves {
		k := [2]int{mv.From, mv.To}
		if _, seen := m.quota[k]; !seen {
			m.pairs = append(m.pairs, k)
		}
		m.quota[k] += mv.Pages
	}
	// Several passes, each over the areas numa_maps still shows on a source
	// node: pages the kernel is busy with (NUMA balancing migrating or
	// splitting them, a huge page being collapsed) answer the status query
	// with an error for a moment, and are picked up by a later pass.
	m.balancing = balancing
	if m.kpageflags = openPageFlags(opts.ProcRoot); m.kpageflags != nil {
		defer m.kpageflags.Close()
	}
	for pass := 0; pass < maxPasses && m.fatal == nil && m.quotaLeft(); pass++ {
		t0 := time.Now()
		regions, err := m.regions()
		tracePhase("regions", t0)
		if err != nil {
			m.fatal = err
			break
		}
		if pass > 0 {
			if len(regions) == 0 {
				break // numa_maps shows nothing left that could move
			}
			if err := sleep(ctx, passPause); err != nil {
				m.fatal = err
				break
			}
		}
		before := m.movedPages()
		m.finished = false
		m.res.Busy = m.pass(regions)
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
func (m *mover) pass(regions []region) uint64 {
	var busy []pageRef
	for _, rg := range regions {
		for addr := rg.start; addr < rg.end && m.fatal == nil && !m.finished; {
			end := chunkEnd(addr, rg)
			n := (end - addr) / rg.step
			if n == 0 {
				break // a tail shorter than one page
			}
			t1 := time.Now()
			refs := m.assign(addr, n, rg)
			tracePhase("assign", t1)
			busy = append(busy, m.move(refs, false)...)
			addr += n * rg.step
		}
	}
	busy = append(busy, m.move(nil, true)...)
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

// assign queries the pages of n steps from addr and gives each page on a
// source node the target with the most quota left for that source.
func (m *mover) assign(addr uint64, n uint64, rg region) []pageRef {
	addrs, weights := m.chunk(addr, n, rg)
	if m.fatal != nil || len(addrs) == 0 {
		return nil
	}
	status := make([]int32, len(addrs))
	t0 := time.Now()
	err := queryPages(m.pid, addrs, status)
	tracePhase("query", t0)
	if err != nil {
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
			r := min(m.quota[k], weights[i])
			m.quota[k] -= r
			out = append(out, pageRef{addr: addrs[i], area: rg.start, from: int(st), to: to, weight: weights[i], reserved: r})
		}
	}
	return out
}

func classOf(p pageRef) PageClass {
	if p.weight > 1 {
		return HugePages
	}
	return BasePages
}

// move moves pages in batches sized by the controller and returns those
// still busy. Huge pages go first, in batches of their own: the controller
// learns each class's cost apart, and a batch is sized by bytes. Unless
// flush, pages too few to fill a batch wait for the next query chunk's, so
// that the size of a call does not depend on where a chunk ends.
func (m *mover) move(pages []pageRef, flush bool) []pageRef {
	pages = append(m.pending, pages...)
	m.pending = nil
	slices.SortStableFunc(pages, func(a, b pageRef) int { return int(classOf(b)) - int(classOf(a)) })
	var busy []pageRef
	for i := 0; i < len(pages) && m.fatal == nil; {
		if err := m.ctx.Err(); err != nil {
			m.fatal = err
			break
		}
		if m.finishWhole(pages[i:]) {
			return nil
		}
		class, limit := classOf(pages[i]), uint64(m.ctl.Size(classOf(pages[i])))
		j, w := i, uint64(0)
		for j < len(pages) && classOf(pages[j]) == class && (j == i || w+pages[j].weight <= limit) {
			w += pages[j].weight
			j++
		}
		if full := w >= limit || j < len(pages) && classOf(pages[j]) == class; !full && !flush {
			m.pending = append(m.pending, pages[i:j]...)
			i = j
			continue
		}
		t2 := time.Now()
		batch := m.guard(pages[i:j])
		tracePhase("guard", t2)
		i = j
		if len(batch) > 0 {
			busy = append(busy, m.call(class, batch)...)
		}
	}
	return busy
}
