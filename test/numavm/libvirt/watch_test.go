package libvirt

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// watchEvery is how often a slow step says what the guest is doing: a QEMU
// start under nested TCG takes minutes, and its log is what tells a hang
// from slow progress while the run still goes on.
const watchEvery = 30 * time.Second

// watch logs, every watchEvery until the returned stop is called, the CPU
// time of libvirtd, QEMU and locus and the last lines of libvirtd's and the
// domain's logs; it stops by itself when the test ends.
func watch(t *testing.T, what string) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	go func() {
		defer wg.Done()
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				t.Logf("%s, %s so far: %s\n%s", what, time.Since(start).Round(time.Second), processes(),
					logTails())
			}
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { close(done); wg.Wait() }) }
	// A step that fails the test returns through its cleanups: the
	// watcher must not log after the test has ended.
	t.Cleanup(stop)
	return stop
}

// processes is "libvirtd 1234 R 12.3s, qemu-system-x86 1300 S 40.1s": the
// processes that matter with their state and CPU time.
func processes() string {
	var out []string
	for _, p := range processStats() {
		// state ... utime stime: fields 14 and 15 of the line.
		if len(p.rest) < 13 || !interesting(p.comm) {
			continue
		}
		ut, _ := strconv.ParseFloat(p.rest[11], 64)
		st, _ := strconv.ParseFloat(p.rest[12], 64)
		out = append(out, fmt.Sprintf("%s %d %s %.1fs", p.comm, p.pid, p.rest[0], (ut+st)/100))
	}
	return strings.Join(out, ", ")
}

func interesting(comm string) bool {
	for _, p := range []string{"libvirtd", "qemu", "locus", "numad", "virsh"} {
		if strings.HasPrefix(comm, p) {
			return true
		}
	}
	return false
}

func logTails() string {
	var b strings.Builder
	files, _ := filepath.Glob("/var/log/libvirt/qemu/*.log")
	for _, f := range append([]string{"/tmp/libvirt/libvirtd.log"}, files...) {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "  %s:\n%s\n", f, indent(tail(string(data), 4)))
	}
	return b.String()
}

func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if len(l) > 300 {
			l = l[:300] + "…"
		}
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}
