package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/status"
)

// The agent on the real node runs the host checks at start, reading the
// kubelet's own config: the node's kubelet runs with the cgroupfs driver and
// the CPU manager policy of the run (none, or static in that variant), and the host's cgroups have the controllers Locus
// needs; the metrics and the status say so.
func TestHostChecksOnTheNode(t *testing.T) {
	n := need(t)
	m := n.metrics(t)
	for _, check := range []string{"cgroup-version", "cgroup-controllers", "kubelet-cpu-manager", "kubelet-memory-manager", "kubelet-cgroup-driver"} {
		if got := m[`locus_host_check{check="`+check+`",status="ok"}`]; got != 1 {
			t.Errorf("locus_host_check{check=%q,status=\"ok\"} = %v, want 1", check, got)
		}
	}
	st, err := status.Read(filepath.Join(n.dir, "agent"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, c := range st.Node.HostChecks {
		found[c.Check] = c.Status + ": " + c.Found
	}
	for check, want := range map[string]string{
		"kubelet-cpu-manager":   "ok: cpuManagerPolicy: " + n.cpuManagerPolicy(t),
		"kubelet-cgroup-driver": "ok: cgroupDriver: cgroupfs",
	} {
		if !strings.HasPrefix(found[check], want) {
			t.Errorf("status: %s = %q, want %q...", check, found[check], want)
		}
	}
}

// cpuManagerPolicy is the policy in the node kubelet's config file.
func (n *e2eNode) cpuManagerPolicy(t *testing.T) string {
	t.Helper()
	for _, line := range strings.Split(readFile(t, filepath.Join(n.dir, "kubelet", "config.yaml")), "\n") {
		if v, ok := strings.CutPrefix(line, "cpuManagerPolicy:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("the node kubelet's config names no cpuManagerPolicy")
	return ""
}
