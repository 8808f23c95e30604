package nodeagent_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The churn of the load runs, whichever process runs the agent.

// loadAgent is the agent under the churn and how it is measured.
type loadAgent struct {
	metricsAddr string
	took        reconcileLog
	sample      func() usage // of the process running the agent
	// profile, started before the churn, stops at its end.
	profile func() (stop func())
	// during, if set, is called about every second from the pods' creation
	// on, and churnStarts once the churn begins.
	during, churnStarts func()
}

// reconcileLog is the exact duration of each reconcile the agent logged.
type reconcileLog interface {
	count() int
	since(n int) []time.Duration
}

// churnResult is what the churn measured.
type churnResult struct {
	setup                  time.Duration
	initial                int // pinned pods bound in the setup
	initialP50, initialP99 time.Duration
	live                   int
	churn                  time.Duration
	hist                   histogram
	exact                  []time.Duration
	bindP50, bindP99       time.Duration
	binds                  int
	start, end             usage
}

func (r churnResult) cpu() time.Duration { return r.end.cpu - r.start.cpu }

func (r churnResult) cpuShare() float64 { return 100 * r.cpu().Seconds() / r.churn.Seconds() }

// String is the LOAD line's part common to both runs: the churn and the
// reconciles' durations.
func (r churnResult) String() string {
	d, exact := r.hist, r.exact
	return fmt.Sprintf("pods=%d churn=%d waves x %d deleted+%d created in %v (%.1f pod changes/s) | reconcile n=%.0f mean=%v p50<=%v p99<=%v (histogram buckets); exact n=%d p50=%v p90=%v p99=%v max=%v | cpuset bind e2e p50=%v p99=%v (n=%d)",
		r.live, loadWaves, loadWaveSize, loadWaveSize, r.churn.Round(time.Millisecond), float64(2*loadWaves*loadWaveSize)/r.churn.Seconds(),
		d.count, d.mean(), d.quantile(0.5), d.quantile(0.99), len(exact), ms(quantile(exact, 0.5)), ms(quantile(exact, 0.9)),
		ms(quantile(exact, 0.99)), ms(quantile(exact, 1)), r.bindP50, r.bindP99, r.binds)
}

// churn creates loadPods pods on n, waits for the pinned ones to get their
// CPUs, then deletes and creates loadWaveSize pods a wave, measuring the
// agent a over the waves.
func churn(t *testing.T, n *node, a loadAgent) churnResult {
	t.Helper()
	live := map[string]*corev1.Pod{}
	next := 0
	lat := &bindLatency{n: n}
	spawn := func() {
		p := n.create(loadPod(next))
		next++
		live[p.Name] = p
		if isBound(p) {
			lat.watch(p)
		}
		if next%10 == 0 && a.during != nil {
			a.during()
		}
	}
	var r churnResult
	t0 := time.Now()
	for range loadPods {
		spawn()
	}
	lat.wait(t, 60*time.Second, a.during)
	r.setup = time.Since(t0)
	r.initialP50, r.initialP99 = lat.quantile(0.5), lat.quantile(0.99)

	runtime.GC()
	r.initial = len(lat.done)
	lat.done = nil // the churn's own latencies from here on
	if a.churnStarts != nil {
		a.churnStarts()
	}
	stopProfile := a.profile()
	h0, first := scrapeHistogram(t, a.metricsAddr), a.took.count()
	r.start = a.sample()
	churnStart := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	for w := range loadWaves {
		waveStart := time.Now()
		names := slices.Sorted(maps.Keys(live))
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for _, name := range names[:loadWaveSize] {
			deletePod(t, live[name])
			n.kubelet.Remove(live[name])
			delete(live, name)
		}
		for range loadWaveSize {
			spawn()
		}
		lat.wait(t, 30*time.Second, a.during)
		for w < loadWaves-1 && time.Since(waveStart) < loadWaveEvery {
			if a.during != nil {
				a.during()
			}
			time.Sleep(min(time.Second, loadWaveEvery-time.Since(waveStart)))
		}
	}
	r.churn = time.Since(churnStart)
	r.end, r.exact = a.sample(), a.took.since(first)
	r.hist = scrapeHistogram(t, a.metricsAddr).minus(h0)
	stopProfile()
	r.live = len(live)
	r.bindP50, r.bindP99, r.binds = lat.quantile(0.5), lat.quantile(0.99), len(lat.done)
	t.Logf("%d pods created in %v, %d of them bound: e2e p50=%v p99=%v", loadPods, r.setup.Round(time.Millisecond),
		r.initial, r.initialP50, r.initialP99)
	warned := warnings(t, n.logFile, live)
	t.Logf("agent warnings by reason: %v", warned)
	for reason, count := range warned {
		if strings.HasSuffix(reason, "/live") {
			t.Errorf("%d warnings %s about pods still running", count, reason)
		}
	}
	if r.hist.count == 0 {
		t.Fatal("no reconcile observed during the churn")
	}
	return r
}
