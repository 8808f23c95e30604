package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

func fixtureRig(t *testing.T) *crashRig {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	r := newCrashRig(t, redisAndBatch, "--cgroup-root", tree.root, "--cgroup-version", "v1",
		"--sysfs-root", sysfs(t, fixture.Small4))
	r.tree = tree
	return r
}

// TestSIGTERMRightAfterStart sends SIGTERM within the agent's first tens of
// milliseconds: the agent must still go through its clean shutdown and exit
// 0. Nothing in a process can catch a signal before the Go runtime has
// started and the stop handler is registered (pkg/stopsignal, in package
// initialisation, before main), and nothing outside shows that moment (the
// runtime's own handlers already fill SigCgt), so the delays count from
// the agent's first line on stderr, which main writes after it. Counting
// them from exec made the test fail on a loaded machine, where the runtime's
// start alone can pass 10 ms; the time to the first line is logged.
func TestSIGTERMRightAfterStart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the agent binary")
	}
	r := fixtureRig(t)
	for _, delay := range []time.Duration{0, 5, 10, 20, 40, 60} {
		c := r.cmd("--resync", "1s")
		c.Stderr = nil
		pipe, err := c.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		first, rest := make(chan time.Duration, 1), make(chan string, 1)
		go func() {
			var out bytes.Buffer
			buf := make([]byte, 4096)
			for {
				n, err := pipe.Read(buf)
				if n > 0 && out.Len() == 0 {
					first <- time.Since(start)
				}
				out.Write(buf[:n])
				if err != nil {
					rest <- out.String()
					return
				}
			}
		}()
		var seen time.Duration
		select {
		case seen = <-first:
		case <-time.After(10 * time.Second):
			t.Fatal("the agent wrote nothing in 10 s")
		}
		time.Sleep(delay * time.Millisecond)
		_ = c.Process.Signal(syscall.SIGTERM)
		out := <-rest
		err = c.Wait()
		if err != nil || !strings.Contains(out, "agent stopped") {
			t.Errorf("SIGTERM %dms after the first line (%v after exec): %v (want a clean exit 0)\n%s", delay, seen, err, out)
		}
		t.Logf("first line %v after exec", seen)
	}
	r.once() // and the state it left is usable
}

// TestRestartRightAfterKill9 restarts the agent while the lock of the one
// killed is still held, as it is until the kernel has torn a killed process
// down: the new agent must wait for it, not refuse to start.
func TestRestartRightAfterKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the agent binary")
	}
	r := fixtureRig(t)
	r.settle() // started, then killed with SIGKILL
	r.once()   // at once, on the real lock

	// A dying holder, played by this test: it lets go 300 ms after the start.
	lock, err := os.OpenFile(filepath.Join(r.stateDir, "agent.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, func() { unix.Flock(int(lock.Fd()), unix.LOCK_UN) })
	r.once()
}
