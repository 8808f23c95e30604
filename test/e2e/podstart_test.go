package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestPodStartOverhead: what the agent adds to a pod's start. For each size
// in LOCUS_E2E_PODSTART (a comma list, e.g. 1,30,100,300), LOCUS_E2E_PODSTART_ROUNDS
// rounds (default 3) alternate the node without the agent (its pod stopped,
// `hack/e2e.sh stop agent`) and with it; each round creates the pods of the
// churn's mix (LS with memory QoS, BE, plain) at once, bound to the node, and
// takes for every pod create → Running (the first watch event that shows its
// container running) and create → first instruction (the runtime's timestamp
// of the container's first output line), each set of rounds (one a side)
// starting at its own point in the second (startAtPhase: the kubelet relists
// every second). Logged per size and side: p50 and p99 of each, and the
// ratios with/without, for docs/benchmarks.md; per round, the load average,
// and with the agent its CPU time over the burst, its reconciles and those
// that waited for the pace (pkg/pace). LOCUS_E2E_PODSTART_ALT_ARGS (flags,
// split on spaces, chart mode only) adds a third side in the same run: the
// agent with those flags too (e.g. --reconcile-pace=0), compared with both.
// On containerd 2 the agent answers containers' creation over NRI; on
// containerd 1.6 it pins after the start. Not part of make e2e: it runs only
// with LOCUS_E2E_PODSTART set (300 pods need LOCUS_E2E_MAX_PODS=330).
func TestPodStartOverhead(t *testing.T) {
	n := need(t)
	sizes := intList(os.Getenv("LOCUS_E2E_PODSTART"))
	if len(sizes) == 0 {
		t.Skip("runs only when asked: LOCUS_E2E_PODSTART=1,30,100,300 (LOCUS_E2E_MAX_PODS=330 hack/e2e.sh up)")
	}
	rounds := 3
	if r := intList(os.Getenv("LOCUS_E2E_PODSTART_ROUNDS")); len(r) == 1 {
		rounds = r[0]
	}
	sides := []side{{name: "without the agent"}, {name: "with the agent", agent: true}}
	if alt := strings.Fields(os.Getenv("LOCUS_E2E_PODSTART_ALT_ARGS")); len(alt) > 0 {
		if n.mode != "chart" {
			t.Fatalf("LOCUS_E2E_PODSTART_ALT_ARGS needs the agent's chart (LOCUS_E2E_MODE=chart), not %s mode", n.mode)
		}
		sides = append(sides, side{name: "with the agent, " + strings.Join(alt, " "), agent: true, args: alt})
	}
	nri := n.withNRI(t)
	n.sloConfig(t)
	sw := &agentSwitch{n: n, up: &sides[1]} // the agent runs, with its own flags
	t.Cleanup(func() { sw.to(t, &sides[1]) })
	for _, size := range sizes {
		by := make([]startTimes, len(sides))
		for round := range len(sides) * rounds {
			// Each set of rounds takes every side once, forward then
			// backward, starting without the agent in even sets of even
			// sizes, so no side always follows another.
			set, i := round/len(sides), round%len(sides)
			if (set+size)%2 == 1 {
				i = len(sides) - 1 - i
			}
			s := &sides[i]
			sw.to(t, s)
			ns := n.namespace(t, fmt.Sprintf("start%d-%d", size, round))
			n.expected[ns+"/CreatedUnpinned"] = true
			startAtPhase(float64(set) / float64(rounds))
			var cost *burstCost
			if s.agent {
				cost = n.agentCost(t)
			}
			load := loadAvg(t)
			times := n.startBurst(t, ns, size)
			by[i].add(times)
			// Each round's own figures too: a run cut short still says them.
			got := fmt.Sprintf("create → Running p50 %s, p99 %s; create → first instruction p50 %s, p99 %s",
				times.q(times.running, 0.5), times.q(times.running, 0.99), times.q(times.first, 0.5), times.q(times.first, 0.99))
			spent := ""
			if s.agent {
				spent = cost.since(t) + "; "
			}
			t.Logf("%d pods, round %d, %s: %s; %sload average %s at the start, %s at the end", size, round, s.name, got, spent, load, loadAvg(t))
			// A burst's pods take longer to go than the teardown's wait
			// allows on a loaded node: they go first, then the teardown
			// checks their cgroups.
			(&churn{n: n, ns: ns}).deleteAllAndWait(t)
			n.deleteAll(t, ns)
		}
		for i := 1; i < len(sides); i++ {
			compare(t, fmt.Sprintf("runtime %s, NRI %v, %d pods at once, %d rounds a side", n.runtime, nri, size, rounds),
				sides[i].name, &by[i], sides[0].name, &by[0])
		}
		if len(sides) > 2 {
			compare(t, fmt.Sprintf("%d pods at once", size), sides[2].name, &by[2], sides[1].name, &by[1])
		}
		// What the kubelet adds once the container runs: its PLEG relists
		// the containers every second, so Running follows the first
		// instruction by up to a second whoever started it.
		for i := range sides {
			g := by[i].sinceFirst()
			t.Logf("%d pods at once, %s: first instruction → Running min %s, p50 %s, max %s",
				size, sides[i].name, by[i].q(g, 0), by[i].q(g, 0.5), by[i].q(g, 1))
		}
	}
}

// side is one way the node runs in TestPodStartOverhead.
type side struct {
	name  string
	agent bool     // the agent's pod runs
	args  []string // flags added to the agent's own
}

// agentSwitch is which side the node is on, and the flags the agent's
// DaemonSet adds to its own (they stay while its pod is stopped).
type agentSwitch struct {
	n    *e2eNode
	up   *side
	args []string
}

// to takes the node to side s: the agent stopped or started, and while
// stopped its DaemonSet's flags set to s's, so the pod it starts runs with
// them.
func (w *agentSwitch) to(t *testing.T, s *side) {
	t.Helper()
	if w.up == s {
		return
	}
	if w.up.agent {
		w.n.e2e(t, "stop", "agent")
	}
	if s.agent {
		if !slices.Equal(w.args, s.args) {
			w.n.setAgentArgs(t, w.args, s.args)
			w.args = s.args
		}
		w.n.e2e(t, "start", "agent")
	}
	w.up = s
}

// setAgentArgs replaces the flags drop, last of the agent container's
// arguments in the chart's DaemonSet, with add.
func (n *e2eNode) setAgentArgs(t *testing.T, drop, add []string) {
	t.Helper()
	ctx := context.Background()
	dss := n.cp.Client.AppsV1().DaemonSets(n.locusNS)
	ds, err := dss.Get(ctx, n.release+"-agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &ds.Spec.Template.Spec.Containers[0]
	if len(c.Args) < len(drop) || !slices.Equal(c.Args[len(c.Args)-len(drop):], drop) {
		t.Fatalf("the agent's arguments %q do not end with %q", c.Args, drop)
	}
	c.Args = append(c.Args[:len(c.Args)-len(drop):len(c.Args)-len(drop)], add...)
	if _, err := dss.Update(ctx, ds, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// compare logs a's start times against b's: p50 and p99 of create →
// Running and create → first instruction, and their ratios.
func compare(t *testing.T, what, aName string, a *startTimes, bName string, b *startTimes) {
	t.Helper()
	r := func(d func(*startTimes) []time.Duration, q float64) string {
		x, y := a.q(d(a), q), b.q(d(b), q)
		return fmt.Sprintf("%s vs %s (%.2f×)", x, y, ratio(x, y))
	}
	running := func(s *startTimes) []time.Duration { return s.running }
	first := func(s *startTimes) []time.Duration { return s.first }
	t.Logf("%s, %s against %s: create → Running p50 %s, p99 %s; create → first instruction p50 %s, p99 %s",
		what, aName, bName, r(running, 0.5), r(running, 0.99), r(first, 0.5), r(first, 0.99))
}

// startAtPhase waits until the wall clock is phase (0 ≤ phase < 1) into a
// second. The kubelet's PLEG relists the containers every second, so
// Running follows a container's start by where in that second it started;
// each pair of rounds (one a side) starts at its own phase, spread over
// the second, so the two sides meet the relist at the same phases. Without
// it the time the agent's start and stop take set each side's phase: one
// pod's Running differed by 150–180 ms a side while its start did not.
func startAtPhase(phase float64) {
	now := time.Now()
	at := now.Truncate(time.Second).Add(time.Duration(phase * float64(time.Second)))
	if at.Before(now) {
		at = at.Add(time.Second)
	}
	time.Sleep(time.Until(at))
}

// sinceFirst is each pod's first instruction → Running (both are kept in
// the order the pods were seen running).
func (s *startTimes) sinceFirst() []time.Duration {
	out := make([]time.Duration, min(len(s.running), len(s.first)))
	for i := range out {
		out[i] = s.running[i] - s.first[i]
	}
	return out
}

// startTimes are the pods' create → Running and create → first instruction.
type startTimes struct{ running, first []time.Duration }

func (s *startTimes) add(o startTimes) {
	s.running = append(s.running, o.running...)
	s.first = append(s.first, o.first...)
}

func (s *startTimes) q(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[min(len(d)-1, int(q*float64(len(d))))].Round(time.Millisecond)
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// startBurst creates size pods at once (eight create calls in flight) and
// returns their start times once all run.
func (n *e2eNode) startBurst(t *testing.T, ns string, size int) startTimes {
	t.Helper()
	pods := n.cp.Client.CoreV1().Pods(ns)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	w, err := pods.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { w.Stop() }()
	var mu sync.Mutex
	created := map[string]time.Time{}
	go func() {
		var wg sync.WaitGroup
		sem := make(chan struct{}, 8)
		for i := range size {
			s := churnSpec(fmt.Sprintf("s%03d", i), i)
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				mu.Lock()
				created[s.name] = time.Now()
				mu.Unlock()
				n.createPod(t, ns, s)
			}()
		}
		wg.Wait()
	}()
	running := map[string]time.Duration{}
	var out startTimes
	var seen []*corev1.Pod
	saw := func(p *corev1.Pod) {
		if _, done := running[p.Name]; done || !containerRunning(p) {
			return
		}
		mu.Lock()
		c, ok := created[p.Name]
		mu.Unlock()
		if !ok {
			return
		}
		running[p.Name] = time.Since(c)
		out.running = append(out.running, running[p.Name])
		seen = append(seen, p)
	}
	for len(running) < size {
		select {
		case ev, ok := <-w.ResultChan():
			if ok {
				if p, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type != watch.Deleted {
					saw(p)
				}
				continue
			}
			// The API server ends watches now and then: list what changed
			// meanwhile (seen late, so counted late) and watch again.
			l, err := pods.List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("%d of %d pods of %s running: %v", len(running), size, ns, err)
			}
			for i := range l.Items {
				saw(&l.Items[i])
			}
			if w, err = pods.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion}); err != nil {
				t.Fatalf("%d of %d pods of %s running: %v", len(running), size, ns, err)
			}
		case <-ctx.Done():
			t.Fatalf("%d of %d pods of %s running after 25 minutes", len(running), size, ns)
		}
	}
	for _, p := range seen {
		n.firstLine(t, p, "w")
		b, err := os.ReadFile(n.containerLog(p, "w"))
		if err != nil {
			t.Fatal(err)
		}
		stamp, _, _ := strings.Cut(string(b), " ")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil {
			t.Fatalf("%s: the runtime's time of the first line %q: %v", p.Name, stamp, err)
		}
		mu.Lock()
		out.first = append(out.first, at.Sub(created[p.Name]))
		mu.Unlock()
	}
	return out
}

func containerRunning(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
		p.Status.ContainerStatuses[0].State.Running != nil
}

// intList reads a comma list of positive integers, leaving out the rest.
func intList(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && v > 0 {
			out = append(out, v)
		}
	}
	return out
}

// burstCost is what the agent had spent when a burst began: its CPU time,
// its reconciles and those paced (pkg/pace; absent from an agent without it).
type burstCost struct {
	n                       *e2eNode
	at                      time.Time
	cpu                     time.Duration
	reconciles, paced, wait float64
}

func (n *e2eNode) agentCost(t *testing.T) *burstCost {
	t.Helper()
	m := n.metrics(t)
	return &burstCost{n: n, at: time.Now(), cpu: n.agentFootprint(t).cpu, reconciles: m["locus_reconcile_duration_seconds_count"],
		paced: m["locus_reconciles_paced_total"], wait: m["locus_reconcile_paced_seconds_total"]}
}

// since says what the agent spent from c on: CPU seconds and their share of
// one CPU over the wall time, reconciles run, and those that waited for the pace.
func (c *burstCost) since(t *testing.T) string {
	t.Helper()
	now := c.n.agentCost(t)
	wall := now.at.Sub(c.at)
	cpu := now.cpu - c.cpu
	return fmt.Sprintf("agent CPU %.2f s over %.1f s (%.1f %% of one CPU), %.0f reconciles, %.0f paced (%.1f s waited)",
		cpu.Seconds(), wall.Seconds(), 100*cpu.Seconds()/wall.Seconds(), now.reconciles-c.reconciles, now.paced-c.paced, now.wait-c.wait)
}

// loadAvg is the machine's 1, 5 and 15 minute load averages.
func loadAvg(t *testing.T) string {
	t.Helper()
	f := strings.Fields(readFile(t, "/proc/loadavg"))
	if len(f) < 3 {
		t.Fatalf("/proc/loadavg: %q", f)
	}
	return strings.Join(f[:3], " ")
}
