package guest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// numad runs the peer's advice, `numad -w CPUS:MB`, from the copy that
// bench/balancer/run.sh puts in testdata/peer with its libraries and the
// dynamic loader (the guest has none of its own).
func numad(t *testing.T, cpus string, mb int) string {
	t.Helper()
	peer, err := filepath.Abs("testdata/peer")
	if err != nil {
		t.Fatal(err)
	}
	loader := filepath.Join(peer, "ld-linux-x86-64.so.2")
	if _, err := os.Stat(filepath.Join(peer, "numad")); err != nil {
		t.Fatalf("numad is not in %s: run bench/balancer/run.sh, which installs and copies it: %v", peer, err)
	}
	out, err := exec.Command(loader, "--library-path", peer, filepath.Join(peer, "numad"), "-w", fmt.Sprintf("%s:%d", cpus, mb)).CombinedOutput()
	if err != nil {
		t.Fatalf("numad -w %s:%d: %v\n%s", cpus, mb, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func advise(t *testing.T, cpus string, mb int) string {
	t.Helper()
	out, err := exec.Command(guestLocus, "advise", "--cpus", cpus, "--memory", fmt.Sprintf("%dMi", mb), "--window", "2s",
		"--margin", "100Mi", "-o", "nodes").CombinedOutput()
	if err != nil {
		t.Fatalf("locus advise: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestGuestAdviseVsNumad asks locus advise and numad -w the same questions
// in the same machine states and prints both answers. Both measure CPU use
// over 2 s (numad's fixed window) and run side by side. The margin is
// numad's own 100 MB.
func TestGuestAdviseVsNumad(t *testing.T) {
	benchEnabled(t)
	for _, d := range []string{"/var/log", "/var/run"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	states := []struct {
		name  string
		setup func(t *testing.T, parent string)
	}{
		{"idle", func(*testing.T, string) {}},
		{"node0-busy", func(t *testing.T, parent string) {
			start(t, parent, "busy0", "0-1", guestLocus, "stress", "--cpu", "2")
		}},
		{"node1-busy-node0-memory-full", func(t *testing.T, parent string) {
			start(t, parent, "busy1", "2-3", guestLocus, "stress", "--cpu", "2")
			start(t, parent, "hog0", "0-1", "numactl", "--membind=0", guestLocus, "stress", "--memory", "600Mi")
		}},
		{"both-busy", func(t *testing.T, parent string) {
			start(t, parent, "busyall", "0-3", guestLocus, "stress", "--cpu", "4")
		}},
	}
	requests := []struct {
		cpus string
		mb   int
	}{{"1", 100}, {"2", 100}, {"3", 100}, {"1", 700}}
	agree, total := 0, 0
	for _, st := range states {
		t.Run(st.name, func(t *testing.T) {
			parent := subtree(t)
			st.setup(t, parent)
			time.Sleep(3 * time.Second) // loads and allocations reach their level
			for _, rq := range requests {
				var ours, theirs string
				var wg sync.WaitGroup
				wg.Go(func() { ours = advise(t, rq.cpus, rq.mb) })
				wg.Go(func() { theirs = numad(t, rq.cpus, rq.mb) })
				wg.Wait()
				total++
				if ours == theirs {
					agree++
				}
				fmt.Printf("ADVISE-PEER: state=%s request=%s:%dMB locus=%s numad=%s same=%v\n", st.name, rq.cpus, rq.mb, ours, theirs, ours == theirs)
			}
			if st.name == "node0-busy" {
				out, err := exec.Command(guestLocus, "advise", "--cpus", "1", "--memory", "100Mi", "--window", "2s").CombinedOutput()
				if err != nil {
					t.Fatalf("locus advise: %v\n%s", err, out)
				}
				for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
					fmt.Printf("ADVISE-TABLE: %s\n", line)
				}
			}
		})
	}
	fmt.Printf("ADVISE-PEER: summary %d of %d answers the same\n", agree, total)
}
