package libvirt

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// reapQEMU makes the test the subreaper of the processes libvirtd starts
// and reaps each QEMU among them once it has exited. libvirtd daemonizes
// QEMU (a double fork), so an exited QEMU's parent is the nearest
// subreaper, else the guest's init, which reaps only the test binaries it
// runs. libvirt waits for a QEMU it killed to disappear (kill(pid, 0)); a
// zombie never does: virsh destroy gave up after 43 s with "Failed to
// terminate process ... with SIGKILL: Device or resource busy", and the
// capabilities probe's QEMU stayed a zombie from libvirtd's start on. The
// test's own children (libvirtd, virsh, locus) are left to os/exec's Wait.
func reapQEMU(t *testing.T) {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", err)
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				for _, pid := range exitedQEMUs(os.Getpid()) {
					var ws unix.WaitStatus
					_, _ = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
				}
			}
		}
	}()
	t.Cleanup(func() { close(done); <-finished })
}

// exitedQEMUs are the QEMU processes that are zombies and children of
// parent.
func exitedQEMUs(parent int) []int {
	var out []int
	for _, p := range processStats() {
		// state ppid ...
		if len(p.rest) < 2 || p.rest[0] != "Z" || p.rest[1] != strconv.Itoa(parent) ||
			!strings.HasPrefix(p.comm, "qemu") {
			continue
		}
		out = append(out, p.pid)
	}
	return out
}
