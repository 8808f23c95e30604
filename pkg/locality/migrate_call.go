//go:build linux

package locality

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// inflight is one batch's move_pages call: its arrays and what the kernel
// answered.
type inflight struct {
	class         PageClass
	batch         []pageRef
	weight        uint64
	addrs         []uintptr
	nodes, status []int32
	err           error
	took          time.Duration
}

// call queues one batch for a move_pages call. Up to opts.InFlight calls run
// at once (on disjoint pages, so each still bounds the stall of the pages it
// moves); the queue is issued when full, or by flush. It returns the pages
// of issued calls still busy after their status was checked.
func (m *mover) call(class PageClass, batch []pageRef) []pageRef {
	c := m.slot(len(m.wave), len(batch))
	c.class, c.batch, c.weight = class, batch, 0
	for j, p := range batch {
		c.addrs[j], c.nodes[j], c.status[j] = p.addr, int32(p.to), statusUnknown
		c.weight += p.weight
	}
	m.wave = append(m.wave, c)
	if len(m.wave) < m.opts.InFlight {
		return nil
	}
	return m.flush()
}

// flush issues the queued calls at once, waits for all of them, and settles
// each in turn.
func (m *mover) flush() []pageRef {
	wave := m.wave
	m.wave = m.wave[:0]
	if len(wave) == 0 || m.fatal != nil {
		return nil
	}
	if m.balancing {
		// The scanner keeps hiding pages; touch them right before the
		// move so the window is too short for it.
		for _, c := range wave {
			if err := touchPages(m.pid, c.addrs); err != nil {
				m.fatal = err
				return nil
			}
		}
	}
	var wg sync.WaitGroup
	for _, c := range wave[1:] {
		wg.Go(func() { m.issue(c) })
	}
	m.issue(wave[0])
	wg.Wait()
	var busy []pageRef
	for _, c := range wave {
		busy = append(busy, m.settle(c)...)
	}
	return busy
}

// issue makes one queued call; it touches nothing of the mover but c, so
// calls of one wave run in parallel.
func (m *mover) issue(c *inflight) {
	start := time.Now()
	c.err = movePages(m.pid, c.addrs, c.nodes, c.status, mpolMFMove)
	c.took = time.Since(start)
}

// settle records what one call did and returns its pages still busy.
func (m *mover) settle(c *inflight) []pageRef {
	m.ctl.Observe(c.class, int(c.weight), c.took)
	if traceCall != nil {
		traceCall(c.class, len(c.batch), int(c.weight), c.took)
	}
	m.res.Calls++
	m.res.LongestStall = max(m.res.LongestStall, c.took)
	m.res.CallTime += c.took
	m.res.stalls = append(m.res.stalls, c.took)
	if errors.Is(c.err, unix.ENOMEM) {
		for _, p := range c.batch {
			m.stop(p.to)
			m.release(p)
		}
		return nil
	}
	if c.err != nil {
		if m.fatal == nil {
			m.fatal = c.err
		}
		for _, p := range c.batch {
			m.release(p)
		}
		return nil
	}
	var verify []pageRef
	for j, p := range c.batch {
		switch st := c.status[j]; {
		case st == int32(p.to):
			m.record(p)
		case st == -int32(unix.ENOMEM):
			m.stop(p.to)
			m.release(p)
		case st == -int32(unix.EACCES):
			// Mapped by other processes too: left for them (MPOL_MF_MOVE).
			m.shared[p.addr] = true
			m.sharedIn[p.area] += p.weight
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
	if m.fatal != nil {
		for _, p := range verify {
			m.release(p)
		}
		return nil
	}
	return m.verify(verify)
}

// slot returns the i-th call of a wave with arrays for n pages, reused
// between waves.
func (m *mover) slot(i, n int) *inflight {
	for len(m.slots) <= i {
		m.slots = append(m.slots, &inflight{})
	}
	c := m.slots[i]
	if cap(c.addrs) < n {
		c.addrs, c.nodes, c.status = make([]uintptr, n), make([]int32, n), make([]int32, n)
	}
	c.addrs, c.nodes, c.status = c.addrs[:n], c.nodes[:n], c.status[:n]
	return c
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
	return m.move(live, true)
}
