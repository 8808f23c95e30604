package agent

import (
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
// milliseconds, while its packages initialise: the agent must still go
// through its clean shutdown and exit 0. (Before the Go runtime has set up
// signal handling, about a millisecond after exec, nothing in the process
// can catch a signal; the test leaves that moment out.)
func TestSIGTERMRightAfterStart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the agent binary")
	}
	r := fixtureRig(t)
	for _, delay := range []time.Duration{10, 15, 20, 30, 40, 60} {
		r.stderr.Reset()
		c := r.cmd("--resync", "1s")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay * time.Millisecond)
		_ = c.Process.Signal(syscall.SIGTERM)
		err := c.Wait()
		if err != nil || !strings.Contains(r.stderr.String(), "agent stopped") {
			t.Errorf("SIGTERM %dms after start: %v (want a clean exit 0)\n%s", delay, err, r.stderr.String())
		}
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

// TestSecondAgentRefused keeps the lock held by a live agent: a second one
// is refused with an error naming the holder.
func TestSecondAgentRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the agent binary")
	}
	old := lockWait
	lockWait = 100 * time.Millisecond
	defer func() { lockWait = old }()
	dir := t.TempDir()
	first, err := takeAgentLock(filepath.Join(dir, "agent.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = takeAgentLock(filepath.Join(dir, "agent.lock"))
	if err == nil || !strings.Contains(err.Error(), "another locus agent (pid ") {
		t.Fatalf("second lock: %v", err)
	}
}
