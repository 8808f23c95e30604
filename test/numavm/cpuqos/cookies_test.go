package cpuqos

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/test/numavm/reexec"
)

// cookiesEnv makes the test binary, re-executed by bench/cpuqos/coreiso.sh
// as COOKIES, print the core scheduling cookie the threads of the pids in
// its arguments share instead of running tests (see TestMain). It reads them
// with its own prctl, not pkg/coresched's, so a fault there cannot hide
// itself.
const cookiesEnv = "NUMAVM_CPUQOS_COOKIES"

func TestMain(m *testing.M) {
	reexec.Main(m, cookiesEnv, "cookies", func() error { return cookies(os.Stdout, os.Args[1:]) })
}

// cookies prints "none" when no thread of the pids has a cookie, "shared
// 0x..." when every one has the same nonzero cookie, and "mixed" with each
// thread's cookie otherwise.
func cookies(out io.Writer, pids []string) error {
	if len(pids) == 0 {
		return fmt.Errorf("no pid given")
	}
	// The kernel reports a cookie as a hash under a key filled once its
	// random number generator is ready; before that every cookie reads 0.
	// A blocking getrandom makes it seed itself (the guest has no hardware
	// RNG).
	if _, err := unix.Getrandom(make([]byte, 1), 0); err != nil {
		return fmt.Errorf("getrandom: %w", err)
	}
	var all []uint64
	var each string
	for _, p := range pids {
		pid, err := strconv.Atoi(p)
		if err != nil || pid <= 0 {
			return fmt.Errorf("pid %q: want a positive whole number", p)
		}
		ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			return err
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			var c uint64
			if err := unix.Prctl(unix.PR_SCHED_CORE, unix.PR_SCHED_CORE_GET, uintptr(tid),
				unix.PR_SCHED_CORE_SCOPE_THREAD, uintptr(unsafe.Pointer(&c))); err != nil {
				return fmt.Errorf("PR_SCHED_CORE_GET of thread %d: %w", tid, err)
			}
			all = append(all, c)
			each += fmt.Sprintf(" %d/%d:%#x", pid, tid, c)
		}
	}
	_, err := fmt.Fprintln(out, verdict(all)+each)
	return err
}

// verdict is "none", "shared 0x..." or "mixed" for the cookies of threads.
func verdict(cs []uint64) string {
	zero, same := 0, true
	for _, c := range cs {
		if c == 0 {
			zero++
		}
		same = same && c == cs[0]
	}
	switch {
	case zero == len(cs):
		return "none"
	case same:
		return fmt.Sprintf("shared %#x", cs[0])
	}
	return "mixed"
}
