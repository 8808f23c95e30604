package agent

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/server"
)

func healthz(t *testing.T, a *Agent) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	a.health.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	return rec.Code, rec.Body.String()
}

// TestHealthzReportsStuckReconcile holds a reconcile inside its steps longer
// than the health bound: /healthz must say so while it runs.
func TestHealthzReportsStuckReconcile(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, func(o *Options) { o.DebugWriteDelay = 200 * time.Millisecond })
	// The health clock is the test's: a loaded machine cannot make the
	// bound pass between two of its steps.
	clock := &testClock{t: time.Unix(1e9, 0)}
	h.a.health = server.NewHealth(clock.now, 100*time.Millisecond)
	if code, body := healthz(t, h.a); code != http.StatusOK {
		t.Fatalf("healthz at start = %d %q", code, body)
	}
	done := make(chan struct{})
	go func() { h.a.Reconcile(); close(done) }()
	for !h.a.health.InProgress() {
		time.Sleep(time.Millisecond)
	}
	clock.advance(300 * time.Millisecond)
	code, body := healthz(t, h.a)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "stuck") {
		t.Errorf("healthz during a stuck reconcile = %d %q, want 503 naming it stuck", code, body)
	}
	<-done
	if code, body := healthz(t, h.a); code != http.StatusOK {
		t.Errorf("healthz after the reconcile completed = %d %q", code, body)
	}
	clock.advance(150 * time.Millisecond) // no reconcile since: the loop has stopped
	if code, body := healthz(t, h.a); code != http.StatusServiceUnavailable || !strings.Contains(body, "not running") {
		t.Errorf("healthz with no reconcile within the bound = %d %q", code, body)
	}
}

// testClock is a clock that moves only when told.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestHealthzReportsFailingReconciles makes every reconcile fail (the
// checkpoint cannot be read): /healthz turns unhealthy after a few.
func TestHealthzReportsFailingReconciles(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, nil)
	if err := os.Mkdir(filepath.Join(h.opts.StateDir, "checkpoint.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= server.FailingReconciles; i++ {
		if res := h.a.Reconcile(); len(res.Errors) == 0 {
			t.Fatal("reconcile succeeded with an unreadable checkpoint")
		}
		code, body := healthz(t, h.a)
		if unhealthy := code == http.StatusServiceUnavailable; unhealthy != (i == server.FailingReconciles) {
			t.Errorf("after %d failed reconciles healthz = %d %q", i, code, body)
		}
	}
	if _, body := healthz(t, h.a); !strings.Contains(body, "checkpoint.json") {
		t.Errorf("healthz does not name the failure: %q", body)
	}
}

// TestConfigErrorsCounted writes an invalid config: the error is counted
// once, however many reconciles keep the last good config.
func TestConfigErrorsCounted(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, nil)
	h.reconcile()
	h.writeConfig(redisAndBatch + "  bogus: [\n")
	h.a.Reconcile()
	h.a.Reconcile()
	if got := testutil.ToFloat64(h.a.metrics.ConfigErrs); got != 1 {
		t.Errorf("locus_config_errors_total = %v, want 1", got)
	}
	if got := testutil.ToFloat64(h.a.metrics.ConfigBad); got != 1 {
		t.Errorf("locus_config_invalid = %v while the config is invalid", got)
	}
	h.writeConfig(redisAndBatch)
	h.a.Reconcile()
	if got := testutil.ToFloat64(h.a.metrics.ConfigBad); got != 0 {
		t.Errorf("locus_config_invalid = %v after a good config", got)
	}
}
