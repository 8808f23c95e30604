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

// The agent runs the host checks at start: a check that warns (this tree's
// cgroups have no cpu.max.burst) is logged once, exported as
// locus_host_check and kept in the status with what to do; a check that is
// ok (a kubelet with the Static memory manager, which Locus lives with) is
// exported but not logged.
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

	if v, ok := metricValue(t, h.a.metrics.Reg, "locus_host_check", "check", "cpu-burst", "status", "warn"); !ok || v != 1 {
		t.Errorf("locus_host_check{cpu-burst,warn} = %v, %v", v, ok)
	}
	for _, c := range []string{"kubelet-memory-manager", "kubelet-cpu-manager"} {
		if v, ok := metricValue(t, h.a.metrics.Reg, "locus_host_check", "check", c, "status", "ok"); !ok || v != 1 {
			t.Errorf("locus_host_check{%s,ok} = %v, %v", c, v, ok)
		}
		if strings.Contains(logs.String(), "check="+c) {
			t.Errorf("the ok check %s is logged:\n%s", c, logs.String())
		}
	}
	if n := strings.Count(logs.String(), "check=cpu-burst status=warn"); n != 1 {
		t.Errorf("the warning check is logged %d times:\n%s", n, logs.String())
	}
	st, err := status.Read(h.opts.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range st.Node.HostChecks {
		found = found || (c.Check == "cpu-burst" && c.Status == "warn" && strings.Contains(c.Do, "Linux 5.14"))
	}
	if !found {
		t.Errorf("status host checks: %+v", st.Node.HostChecks)
	}
}
