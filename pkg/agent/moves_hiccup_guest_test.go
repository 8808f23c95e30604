package agent

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// hiccupProbe measures, on every CPU of the guest, how late a 10 ms sleep
// wakes: the longest lateness while it runs. Under the emulator a vCPU is a
// host thread, and on a loaded host it is descheduled for tens or hundreds
// of milliseconds at a time; a call the agent makes on that vCPU lasts that
// much longer, whatever its size. The migration's stall budget bounds the
// agent's work per call, so the guest test holds a call to the budget plus
// the longest time a vCPU was away in the same window.
type hiccupProbe struct {
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	longest time.Duration
}

// hiccupTick is the probe's sleep: short enough to see a vCPU away for
// tens of milliseconds, long enough that eight probes do not load the
// emulated guest.
const hiccupTick = 10 * time.Millisecond

func startHiccupProbe(cpus []int) *hiccupProbe {
	p := &hiccupProbe{stop: make(chan struct{})}
	for _, cpu := range cpus {
		p.wg.Add(1)
		go p.run(cpu)
	}
	return p
}

func (p *hiccupProbe) run(cpu int) {
	defer p.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return
	}
	var worst time.Duration
	for {
		select {
		case <-p.stop:
			p.mu.Lock()
			p.longest = max(p.longest, worst)
			p.mu.Unlock()
			return
		default:
		}
		start := time.Now()
		time.Sleep(hiccupTick)
		worst = max(worst, time.Since(start)-hiccupTick)
	}
}

// end stops the probe and returns the longest lateness seen on any CPU.
func (p *hiccupProbe) end() time.Duration {
	close(p.stop)
	p.wg.Wait()
	return p.longest
}
