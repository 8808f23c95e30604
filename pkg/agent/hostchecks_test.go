package agent

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/status"
)

// The agent runs the host checks at start: a kubelet with the Static memory
// manager is logged once, exported as locus_host_check and kept in the
// status; a check that is ok is exported but not logged.
func TestHostChecksAtStart(t *testing.T) {
	kubelet := t.TempDir()
	cfg := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmemoryManagerPolicy: Static\n"
	if err := os.WriteFile(filepath.Join(kubelet, "config.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, func(o *Options) {
		o.Kubelet.Dir = kubelet
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	h.reconcile()
	h.reconcile()

	if v, ok := metricValue(t, h.a.metrics.Reg, "locus_host_check", "check", "kubelet-memory-manager", "status", "fail"); !ok || v != 1 {
		t.Errorf("locus_host_check{kubelet-memory-manager,fail} = %v, %v", v, ok)
	}
	if v, ok := metricValue(t, h.a.metrics.Reg, "locus_host_check", "check", "kubelet-cpu-manager", "status", "ok"); !ok || v != 1 {
		t.Errorf("locus_host_check{kubelet-cpu-manager,ok} = %v, %v", v, ok)
	}
	if n := strings.Count(logs.String(), "check=kubelet-memory-manager status=fail"); n != 1 {
		t.Errorf("the failed check is logged %d times:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "check=kubelet-cpu-manager") {
		t.Errorf("an ok check is logged:\n%s", logs.String())
	}
	st, err := status.Read(h.opts.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range st.Node.HostChecks {
		found = found || (c.Check == "kubelet-memory-manager" && c.Status == "fail" && strings.Contains(c.Do, "memoryManagerPolicy: None"))
	}
	if !found {
		t.Errorf("status host checks: %+v", st.Node.HostChecks)
	}
}
