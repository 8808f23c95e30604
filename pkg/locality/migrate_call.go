//go:build linux

package locality

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// call moves one batch with one move_pages call and returns the pages still
// busy after their status was checked.
func (m *mover) call(class PageClass, batch []pageRef) []pageRef {
	addrs, nodes, status := m.buffers(len(batch))
	var weight uint64
	for j, p := range batch {
		addrs[j], nodes[j], status[j] = p.addr, int32(p.to), statusUnknown
		weight += p.weight
	}
	if m.balancing {
		// The scanner keeps hiding pages; touch them right before the
		// move so the window is too short for it.
		if err := touchPages(m.pid, addrs); err != nil {
			m.fatal = err
			return nil
		}
	}
	start := time.Now()
	err := movePages(m.pid, addrs, nodes, status, mpolMFMove)
	took := time.Since(start)
	m.ctl.Observe(class, int(weight), took)
	if traceCall != nil {
		traceCall(class, len(batch), int(weight), took)
	}
	m.res.addCall(took, m.ctl.Wait(class, int(weight), took))
	if errors.Is(err, unix.ENOMEM) {
		for _, p := range batch {
			m.stop(p.to)
			m.release(p)
		}
		return nil
	}
	if err != nil {
		m.fatal = err
		return nil
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
	return m.verify(verify)
}

// buffers returns the move_pages arrays for n pages, reused between calls.
func (m *mover) buffers(n int) ([]uintptr, []int32, []int32) {
	if cap(m.addrBuf) < n {
		m.addrBuf, m.nodeBuf, m.statBuf = make([]uintptr, n), make([]int32, n), make([]int32, n)
	}
	return m.addrBuf[:n], m.nodeBuf[:n], m.statBuf[:n]
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

// addCall counts a call that took took and made a thread wait up to wait.
func (r *ProcessResult) addCall(took, wait time.Duration) {
	r.Calls++
	r.LongestStall = max(r.LongestStall, wait)
	r.LongestCall = max(r.LongestCall, took)
	r.CallTime += took
	r.stalls = append(r.stalls, wait)
}
