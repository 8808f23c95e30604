package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/status"
)

// writeKubelet replaces the kubelet's checkpoint as the kubelet does: a new
// file renamed over the old one. Checksum 0 is one the kubelet accepts.
func writeKubelet(t *testing.T, dir, content string) {
	t.Helper()
	tmp := filepath.Join(dir, ".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, kubelet.CPUManagerFile)); err != nil {
		t.Fatal(err)
	}
}

// The agent reads the kubelet's checkpoint at every reconcile that finds it
// changed: its CPUs are never given, a CPU the kubelet takes moves the
// workload that held it (with a Warning), and a corrupt checkpoint is a
// Warning, every CPU the kubelet's and no cpuset written, never a crash.
func TestKubeletCheckpointIsFollowed(t *testing.T) {
	kdir := t.TempDir()
	writeKubelet(t, kdir, `{"policyName":"static","defaultCpuSet":"0-2","entries":{"u1":{"app":"3"}},"checksum":0}`)
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, func(o *Options) { o.Kubelet = kubelet.Paths{Dir: kdir} })

	h.reconcile()
	if got := h.checkpoint().Assignments["redis"].CPUs; !got.Equals(cpuset.New(1, 2)) {
		t.Fatalf("redis got %s, want 1-2 beside the kubelet's CPU 3", got)
	}
	if got := tree.file("pods/batch", "cpuset.cpus"); got != "0" {
		t.Errorf("batch cpuset.cpus = %q: the shared pool must leave out the kubelet's CPU 3", got)
	}
	st, err := status.Read(h.opts.StateDir)
	if err != nil || st.Node.KubeletCPUs != "3" || st.Node.Kubelet == nil || st.Node.Kubelet.CPUManagerPolicy != "static" {
		t.Fatalf("status node %+v, %v", st.Node, err)
	}

	// The kubelet restarted and pinned CPU 2: redis moves, and is told why.
	writeKubelet(t, kdir, `{"policyName":"static","defaultCpuSet":"0-1,3","entries":{"u1":{"app":"2"}},"checksum":0}`)
	h.reconcile()
	if got := h.checkpoint().Assignments["redis"].CPUs; !got.Equals(cpuset.New(1, 3)) {
		t.Fatalf("redis got %s after the kubelet took CPU 2, want 1,3", got)
	}
	if got := tree.file("pods/redis", "cpuset.cpus"); got != "1,3" {
		t.Errorf("redis cpuset.cpus = %q", got)
	}
	if !kubeletEvent(h, "KubeletCPUConflict", "redis", "cpus 2 are the kubelet's") {
		t.Errorf("no KubeletCPUConflict event: %v", h.events())
	}

	// A corrupt checkpoint: a Warning, nothing pinned, no cpuset written.
	before := tree.file("pods/batch", "cpuset.cpus")
	writeKubelet(t, kdir, `{"policyName":"static","defaultCpuSet":"0-1,3","entries":{"u1":{"app":"2"}},"checksum":12345}`)
	if res := h.reconcile(); len(res.Errors) > 0 {
		t.Fatalf("errors %v", res.Errors)
	}
	if !kubeletEvent(h, "KubeletCheckpointUnreadable", "", "checksum") {
		t.Errorf("no KubeletCheckpointUnreadable event: %v", h.events())
	}
	if as := h.checkpoint().Assignments; len(as) > 0 {
		t.Errorf("assignments %v with an unreadable kubelet checkpoint", as)
	}
	if got := tree.file("pods/batch", "cpuset.cpus"); got != before {
		t.Errorf("batch cpuset.cpus changed to %q", got)
	}
}

func kubeletEvent(h *harness, reason, workload, text string) bool {
	for _, e := range h.events() {
		if e.Reason == reason && e.Workload == workload && strings.Contains(e.Message, text) {
			return true
		}
	}
	return false
}
