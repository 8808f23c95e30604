package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/internal/kubetest"
)

// soakPods is the size of each wave.
const soakPods = 50

// Scenario 5: waves of 50 pods (LS with memory QoS, BE, plain) created and
// deleted for LOCUS_E2E_SOAK (default 3m, at least two waves). Every pod is
// managed in every wave, the agent's resident memory stays flat from wave to
// wave, and the reconcile latency is logged (p50/p99 from the agent's
// histogram) for docs/benchmarks.md.
func TestSoakWaves(t *testing.T) {
	n := need(t)
	n.sloConfig(t)
	soak := 3 * time.Minute
	if v := os.Getenv("LOCUS_E2E_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("LOCUS_E2E_SOAK=%q: %v", v, err)
		}
		soak = d
	}
	agent := n.pid(t, "agent")
	before, cpu0 := n.metrics(t), n.agentFootprint(t).cpu
	start := time.Now()
	var rss []int
	for wave := 1; wave <= 2 || time.Since(start) < soak; wave++ {
		t0 := time.Now()
		ns := n.namespace(t, fmt.Sprintf("soak%d", wave))
		n.soakWave(t, ns)
		up := time.Since(t0)
		n.deleteAll(t, ns)
		kb, err := strconv.Atoi(strings.Fields(procStatus(t, agent, "VmRSS"))[0])
		if err != nil {
			t.Fatal(err)
		}
		rss = append(rss, kb)
		t.Logf("wave %d: %d pods running and managed in %s, all gone in %s; agent RSS %d KiB (%s)",
			wave, soakPods, up.Round(100*time.Millisecond), (time.Since(t0) - up).Round(100*time.Millisecond), kb, n.agentFootprint(t))
	}
	after := n.metrics(t)
	p50, p99, count := histogramQuantiles(before, after, "locus_reconcile_duration_seconds")
	t.Logf("%d waves in %s: %.0f reconciles, p50 %.1f ms, p99 %.1f ms (interpolated in the agent's buckets); agent RSS KiB by wave %v; agent CPU %.1f %% of a CPU (%s)",
		len(rss), time.Since(start).Round(time.Second), count, p50*1000, p99*1000, rss,
		100*float64(n.agentFootprint(t).cpu-cpu0)/float64(time.Since(start)), n.mode)
	if n.pid(t, "agent") != agent {
		t.Fatal("the agent restarted during the soak")
	}
	// Flat: the last wave ends within 20 % (and 16 MiB) of the first.
	if last, first := rss[len(rss)-1], rss[0]; float64(last) > float64(first)*1.2 && last-first > 16<<10 {
		t.Errorf("agent RSS grew from %d KiB after wave 1 to %d KiB after wave %d", first, last, len(rss))
	}
	if e := after["locus_reconcile_errors_total"] - before["locus_reconcile_errors_total"]; e != 0 {
		t.Errorf("%v reconciles failed during the soak", e)
	}
}

// soakWave creates the wave's pods in parallel and waits until every one runs
// and the agent manages it (it has a locus_workload_cpus series).
func (n *e2eNode) soakWave(t *testing.T, ns string) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range soakPods {
		s := podSpec{name: fmt.Sprintf("p%02d", i), args: []string{"-mem", "4Mi"}}
		switch i % 3 {
		case 0:
			s.labels = map[string]string{"koordinator.sh/qosClass": "LS"}
			s.annotations = map[string]string{"koordinator.sh/memoryQOS": `{"policy": "auto"}`}
			s.memory = "16Mi/32Mi"
		case 1:
			s.labels = map[string]string{"koordinator.sh/qosClass": "BE"}
		}
		wg.Add(1)
		go func() { defer wg.Done(); n.createPod(t, ns, s) }()
	}
	wg.Wait()
	kubetest.WaitFor(t, fmt.Sprintf("%d pods of %s running and managed", soakPods, ns), 4*podTimeout, func(ctx context.Context) (bool, error) {
		l, err := n.cp.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range l.Items {
			if p.Status.Phase == "Running" {
				running++
			}
		}
		managed := 0
		for k := range n.metrics(t) {
			if strings.HasPrefix(k, "locus_workload_cpus{") && strings.Contains(k, `workload="`+ns+"/") {
				managed++
			}
		}
		if running < soakPods || managed < soakPods {
			return false, fmt.Errorf("%d running, %d managed", running, managed)
		}
		return true, nil
	})
}

// histogramQuantiles returns the p50 and p99 of the observations a histogram
// gained between two scrapes, interpolated linearly inside buckets as
// Prometheus's histogram_quantile does, and their count.
func histogramQuantiles(before, after map[string]float64, name string) (p50, p99, count float64) {
	type bucket struct{ le, n float64 }
	var bs []bucket
	for k, v := range after {
		le, ok := strings.CutPrefix(k, name+`_bucket{le="`)
		if !ok {
			continue
		}
		le = strings.TrimSuffix(le, `"}`)
		bound := math.Inf(1)
		if le != "+Inf" {
			bound, _ = strconv.ParseFloat(le, 64)
		}
		bs = append(bs, bucket{bound, v - before[k]})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	if len(bs) == 0 || bs[len(bs)-1].n == 0 {
		return 0, 0, 0
	}
	count = bs[len(bs)-1].n
	q := func(phi float64) float64 {
		rank, lower, prev := phi*count, 0.0, 0.0
		for _, b := range bs {
			if b.n >= rank {
				if math.IsInf(b.le, 1) {
					return lower
				}
				return lower + (b.le-lower)*(rank-prev)/(b.n-prev)
			}
			lower, prev = b.le, b.n
		}
		return lower
	}
	return q(0.5), q(0.99), count
}
