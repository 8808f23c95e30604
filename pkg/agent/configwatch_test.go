package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/status"
)

// reconciles is how many reconciles the agent has run, from its own
// histogram of their durations.
func reconciles(t *testing.T, a *Agent) uint64 {
	t.Helper()
	mfs, err := a.metrics.Reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "locus_reconcile_duration_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatal("no locus_reconcile_duration_seconds")
	return 0
}

// runAgent runs h's agent until the test ends and waits for its first
// reconcile.
func runAgent(t *testing.T, h *harness) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, func() bool { return reconciles(t, h.a) >= 1 })
}

// reservedIs waits until the status says the reserved CPUs are cpus: a
// config change was acted on.
func reservedIs(t *testing.T, h *harness, cpus string) {
	t.Helper()
	waitFor(t, func() bool {
		st, err := status.Read(h.opts.StateDir)
		return err == nil && st.Node.Reserved == cpus
	})
}

// Only a change of the config file itself wakes the agent: another file in
// its directory (the agent's own log, an editor's swap file) written all
// the time causes no reconcile. Before, each write did, after a 20 ms
// settle: about 40 reconciles a second. A change of the file, written in
// place or renamed over it, is still acted on.
func TestConfigWatchIgnoresOtherFiles(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, func(o *Options) { o.Resync = time.Hour })
	runAgent(t, h)

	logFile := filepath.Join(filepath.Dir(h.cfgFile), "agent.log")
	before, start := reconciles(t, h.a), time.Now()
	for time.Since(start) < 2*time.Second {
		appendLine(t, logFile, "level=ERROR msg=reconcile err=persistent")
		time.Sleep(25 * time.Millisecond) // a line now and then, each past the settle
	}
	time.Sleep(100 * time.Millisecond) // past the settle of the last write
	n := reconciles(t, h.a) - before
	t.Logf("%d reconciles in %s of writes to a log beside the config (%.1f/s)", n, time.Since(start).Round(time.Millisecond),
		float64(n)/time.Since(start).Seconds())
	if n > 0 {
		t.Errorf("%d reconciles while only another file of the config's directory changed", n)
	}

	if err := os.WriteFile(h.cfgFile, []byte(strings.Replace(redisAndBatch, `reservedCPUs: "0"`, `reservedCPUs: "0-1"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	reservedIs(t, h, "0-1")
	tmp := h.cfgFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Replace(redisAndBatch, `reservedCPUs: "0"`, `reservedCPUs: "3"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, h.cfgFile); err != nil {
		t.Fatal(err)
	}
	reservedIs(t, h, "3")
}

// A ConfigMap mounted as a volume is updated by swapping a symlink
// (..data) to a new directory: the config's own name sees no event, yet
// the change is acted on.
func TestConfigWatchFollowsConfigMapUpdates(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	dir := t.TempDir()
	publish := func(version, cfg string) {
		t.Helper()
		data := filepath.Join(dir, "..v"+version)
		if err := os.Mkdir(data, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeSettled(filepath.Join(data, "host.yaml"), []byte(cfg)); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(filepath.Base(data), tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	publish("1", redisAndBatch)
	if err := os.Symlink("..data/host.yaml", filepath.Join(dir, "host.yaml")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, tree, redisAndBatch, func(o *Options) { o.Resync = time.Hour; o.ConfigFile = filepath.Join(dir, "host.yaml") })
	runAgent(t, h)
	for i := range 50 {
		appendLine(t, filepath.Join(dir, "agent.log"), fmt.Sprintf("line %d", i))
	}
	publish("2", strings.Replace(redisAndBatch, `reservedCPUs: "0"`, `reservedCPUs: "0-1"`, 1))
	reservedIs(t, h, "0-1")
}

func appendLine(t *testing.T, file, line string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, line); err != nil {
		t.Fatal(err)
	}
}
