// Package coresched gives a workload's processes a Linux core scheduling
// cookie of their own (prctl PR_SCHED_CORE, Linux 5.14 and later built with
// CONFIG_SCHED_CORE): the kernel then never runs a task without that cookie
// on an SMT sibling of a CPU running one of them, so no other workload
// shares their cores while they run. It is the only code that sets cookies;
// the agent calls it for the workloads the decision isolates.
package coresched

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnavailable wraps every failure that means the kernel cannot do it.
var ErrUnavailable = errors.New("core scheduling is not available")

// Support is what Probe found.
type Support struct {
	Available bool
	Reason    string // one line for status, either way
}

// Probe asks the kernel for the calling thread's cookie, which any kernel
// with core scheduling answers and others refuse.
func Probe() Support {
	var c uint64
	err := prctl(unix.PR_SCHED_CORE_GET, 0, unix.PR_SCHED_CORE_SCOPE_THREAD, uintptr(unsafe.Pointer(&c)))
	if err == nil {
		waitReadable()
		return Support{Available: true, Reason: "available (prctl PR_SCHED_CORE)"}
	}
	return Support{Reason: strings.Replace(err.Error(), ErrUnavailable.Error(), "unavailable", 1)}
}

// waitReadable returns once cookies read as what they are, or after
// readableWait. PR_SCHED_CORE_GET reports a cookie hashed with the kernel's
// pointer-hashing key, filled only once its random number generator is
// ready (and a moment after); before, every cookie reads 0, and an
// isolated workload would look uncookied and get a fresh cookie at every
// reconcile. A blocking getrandom of one byte makes the kernel seed
// itself (kernels since 5.4 do within about a second); then a thread of
// its own, given a cookie, reads it back until it is not 0. On a host up
// for more than a few seconds this costs one read.
func waitReadable() {
	var b [1]byte
	for {
		if _, err := unix.Getrandom(b[:], 0); err != unix.EINTR {
			break
		}
	}
	_ = onThread(func() error {
		if err := prctl(unix.PR_SCHED_CORE_CREATE, 0, unix.PR_SCHED_CORE_SCOPE_THREAD, 0); err != nil {
			return err
		}
		for deadline := time.Now().Add(readableWait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if c, err := Cookie(0); err != nil || c != 0 {
				return err
			}
		}
		return nil
	})
}

// readableWait bounds waitReadable: past it the agent goes on, and
// reads cookies as the kernel reports them.
const readableWait = 10 * time.Second

// explain turns a prctl errno into what it means here.
func explain(err error) error {
	switch {
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("%w: the kernel has no PR_SCHED_CORE (before Linux 5.14, or built without CONFIG_SCHED_CORE)", ErrUnavailable)
	case errors.Is(err, unix.ENODEV):
		return fmt.Errorf("%w: SMT is absent or off, so no core has siblings to isolate", ErrUnavailable)
	}
	return err
}

func prctl(cmd, pid, scope uintptr, addr uintptr) error {
	if err := unix.Prctl(unix.PR_SCHED_CORE, cmd, pid, scope, addr); err != nil {
		return explain(err)
	}
	return nil
}

// Cookie is the core scheduling cookie of a task (0: none; 0 as pid: the
// calling thread). Cookies are opaque: equal means shared.
func Cookie(pid int) (uint64, error) {
	var c uint64
	err := prctl(unix.PR_SCHED_CORE_GET, uintptr(pid), unix.PR_SCHED_CORE_SCOPE_THREAD, uintptr(unsafe.Pointer(&c)))
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w", pid, err)
	}
	return c, nil
}

// Plan says what makes every process of a workload share one cookie of its
// own, from their cookies now (pids in a stable order): create a cookie on
// the first when it has none, then share the first's cookie to every
// process whose cookie differs. Nothing when they already share one.
func Plan(pids []int, cookies map[int]uint64) (create bool, shareTo []int) {
	if len(pids) == 0 {
		return false, nil
	}
	ref := cookies[pids[0]]
	create = ref == 0
	for _, p := range pids[1:] {
		if create || cookies[p] != ref {
			shareTo = append(shareTo, p)
		}
	}
	return create, shareTo
}

// Isolate gives the processes (every thread of each) one cookie of their
// own, as Plan says. Processes that exit meanwhile are skipped.
func Isolate(pids []int) error {
	cookies := map[int]uint64{}
	var live []int
	for _, p := range pids {
		c, err := Cookie(p)
		if errors.Is(err, ErrUnavailable) {
			return err
		}
		if err == nil {
			cookies[p] = c
			live = append(live, p)
		}
	}
	create, shareTo := Plan(live, cookies)
	if create {
		if err := prctl(unix.PR_SCHED_CORE_CREATE, uintptr(live[0]), unix.PR_SCHED_CORE_SCOPE_THREAD_GROUP, 0); err != nil {
			return fmt.Errorf("create a cookie for pid %d: %w", live[0], err)
		}
	}
	if len(shareTo) == 0 {
		return nil
	}
	return onThread(func() error {
		// The thread takes the workload's cookie to push it on; it is never
		// given back to the runtime (onThread ends it), so the cookie does
		// not leak onto the agent's other work.
		if err := prctl(unix.PR_SCHED_CORE_SHARE_FROM, uintptr(live[0]), unix.PR_SCHED_CORE_SCOPE_THREAD, 0); err != nil {
			return fmt.Errorf("take the cookie of pid %d: %w", live[0], err)
		}
		return shareAll(shareTo)
	})
}

// Clear takes the processes' cookies away (they share cores with anyone
// again), by pushing the cookie of a thread that has none.
func Clear(pids []int) error {
	return onThread(func() error {
		if c, err := Cookie(0); err != nil || c != 0 {
			return fmt.Errorf("the agent's thread has cookie %d (%v); not clearing", c, err)
		}
		return shareAll(pids)
	})
}

func shareAll(pids []int) error {
	for _, p := range pids {
		err := prctl(unix.PR_SCHED_CORE_SHARE_TO, uintptr(p), unix.PR_SCHED_CORE_SCOPE_THREAD_GROUP, 0)
		if err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("pid %d: %w", p, err)
		}
	}
	return nil
}

// onThread runs f on an OS thread of its own that ends with it, so any
// cookie f leaves on the thread goes with it.
func onThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		done <- f()
	}()
	return <-done
}
