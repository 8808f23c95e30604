package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
)

// churnWave is how many pods each wave deletes and creates.
const churnWave = 30

// TestChurnPodBesideHost: the agent's footprint under a churn of LOCUS_E2E_CHURN
// pods (300 for docs/benchmarks.md), the agent as the chart's pod and then the
// same agent as a host process, in one run on one node. Not part of make e2e:
// it runs only with LOCUS_E2E_CHURN set, on a node whose kubelet takes that many
// pods (LOCUS_E2E_MAX_PODS=330 hack/e2e.sh up; chart mode).
//
// One pinned pod takes a CPU of its own, so the agent writes every other pod's
// cpuset.cpus (the shared pool, the other CPU); a third of the pods are LS with
// memory QoS auto and lowLimitPercent 100 (memory.soft_limit_in_bytes = their
// request), a third BE, a third plain. The pods stay up across both rounds; each
// round runs LOCUS_E2E_CHURN_WAVES (default 3) waves deleting 30 and creating
// 30, and logs the agent's CPU share, its memory first → last and the reconcile
// p50/p99. It fails when pods do not run, or the agent does not manage the new
// ones (their cgroups' values, and its locus_workload_cpus series). Each agent's
// rest is measured in the same run, with no pods and with all of them settled.
func TestChurnPodBesideHost(t *testing.T) {
	n := need(t)
	total, err := strconv.Atoi(os.Getenv("LOCUS_E2E_CHURN"))
	if err != nil || total < churnWave {
		t.Skipf("the %d-pod churn runs only when asked: LOCUS_E2E_CHURN=300 (LOCUS_E2E_MAX_PODS=330 hack/e2e.sh up)", 300)
	}
	if n.mode != "chart" {
		t.Skip("the churn compares the chart's pod with the host process: a chart-mode node")
	}
	waves := 3
	if v := os.Getenv("LOCUS_E2E_CHURN_WAVES"); v != "" {
		if waves, err = strconv.Atoi(v); err != nil || waves < 1 {
			t.Fatalf("LOCUS_E2E_CHURN_WAVES=%q", v)
		}
	}
	n.sloConfig(t)
	ns := n.namespace(t, "churn")
	c := &churn{n: n, ns: ns}

	atRest(t, "pod agent, no pods", n.agentFootprint)

	_, pinned := n.pinnedPod(t, ns, "pinned")
	c.pinned = pinned
	t0, cpu0 := time.Now(), n.agentFootprint(t)
	names := make([]string, total)
	for i := range names {
		names[i] = fmt.Sprintf("c%03d", i)
	}
	c.create(t, names)
	c.waitManaged(t, names, 20*time.Minute)
	up := time.Since(t0)
	cpu1 := n.agentFootprint(t)
	t.Logf("%d pods (and the pinned one) running and managed in %s; pod agent %.1f %% of a CPU meanwhile; %s",
		total, up.Round(time.Second), 100*float64(cpu1.cpu-cpu0.cpu)/float64(up), cpu1)
	c.live = names
	atRest(t, fmt.Sprintf("pod agent, %d pods settled", total+1), n.agentFootprint)

	c.round(t, "pod", waves, n.agentFootprint)

	// The same agent as a host process, on the same pods.
	n.e2e(t, "stop", "agent")
	hostUp := false
	t.Cleanup(func() {
		if hostUp {
			n.e2e(t, "stop", "host-agent")
		}
		n.e2e(t, "start", "agent")
	})
	n.e2e(t, "start", "host-agent")
	hostUp = true
	host := func(t testing.TB) footprint { return hostFootprint(t, n.hostAgentPID(t)) }
	t1 := time.Now()
	c.waitManaged(t, c.live, 5*time.Minute)
	t.Logf("host agent: all %d pods managed %s after its start; %s", len(c.live), time.Since(t1).Round(time.Second), host(t))
	atRest(t, fmt.Sprintf("host agent, %d pods settled", len(c.live)+1), host)
	c.round(t, "host", waves, host)

	// The pods go before the cleanup's deleteAll, whose wait is sized for a few.
	t2 := time.Now()
	pods := n.cp.Client.CoreV1().Pods(ns)
	if err := pods.DeleteCollection(ctxT(t), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	kubetest.WaitFor(t, "the churn's pods to be gone", 20*time.Minute, func(ctx context.Context) (bool, error) {
		l, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		if len(l.Items) > 0 {
			return false, fmt.Errorf("%d left", len(l.Items))
		}
		return true, nil
	})
	t.Logf("%d pods deleted in %s", total+1, time.Since(t2).Round(time.Second))
	// The host agent with nothing left, so that both agents' rest is in one run.
	atRest(t, "host agent, no pods", host)
}

// restWindow is how long an at-rest figure is measured; restSettle how long
// the agent is left after a change before one starts, so that the last
// reconciles of the change are not counted as rest.
const (
	restWindow = 30 * time.Second
	restSettle = 15 * time.Second
)

// atRest logs the agent's CPU share over restWindow with nothing changing,
// and its memory at the end, for docs/benchmarks.md. It fails when the agent
// is not at rest at all (over 10 % of a CPU with nothing to do).
func atRest(t *testing.T, label string, fp func(testing.TB) footprint) {
	t.Helper()
	time.Sleep(restSettle)
	first := fp(t)
	time.Sleep(restWindow)
	last := fp(t)
	share := float64(last.cpu-first.cpu) / float64(restWindow)
	t.Logf("at rest, %s: %.2f %% of a CPU over %s; %s", label, 100*share, restWindow, last)
	if share > 0.10 {
		t.Errorf("at rest, %s: %.1f %% of a CPU", label, 100*share)
	}
}

// churn is the pods of one namespace the test keeps at a count.
type churn struct {
	n      *e2eNode
	ns     string
	pinned cpuset.CPUSet
	live   []string // the pods that run now
	next   int      // the next wave's number
}

// spec is the i-th pod of the mix: LS with memory QoS, BE, plain.
func churnSpec(name string, i int) podSpec {
	s := podSpec{name: name, args: []string{"-mem", "4Mi"}}
	switch i % 3 {
	case 0:
		s.labels = lsLabel
		s.annotations = map[string]string{"koordinator.sh/memoryQOS": lsProtected}
		s.memory = "16Mi/32Mi"
	case 1:
		s.labels = map[string]string{"koordinator.sh/qosClass": "BE"}
	}
	return s
}

// create creates the pods of the mix.
func (c *churn) create(t *testing.T, names []string) {
	t.Helper()
	specs := make([]podSpec, len(names))
	for i, name := range names {
		specs[i] = churnSpec(name, i)
	}
	c.createSpecs(t, specs)
}

// createSpecs creates the pods, eight at a time.
func (c *churn) createSpecs(t *testing.T, specs []podSpec) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for _, s := range specs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c.n.createPod(t, c.ns, s)
		}()
	}
	wg.Wait()
}

// waitManaged waits until every named pod runs, has a locus_workload_cpus series
// and its container's cpuset.cpus off the pinned CPU (which only the agent
// writes); an LS pod also its memory.soft_limit_in_bytes = its request.
func (c *churn) waitManaged(t *testing.T, names []string, timeout time.Duration) {
	t.Helper()
	want := map[string]int{}
	for i, name := range names {
		want[name] = i
	}
	kubetest.WaitFor(t, fmt.Sprintf("%d pods of %s running and managed", len(names), c.ns), timeout, func(ctx context.Context) (bool, error) {
		l, err := c.n.cp.Client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		series := map[string]bool{}
		for k := range c.n.metrics(t) {
			if w, ok := strings.CutPrefix(k, "locus_workload_cpus{"); ok {
				if _, rest, ok := strings.Cut(w, `workload="`+c.ns+"/"); ok {
					name, _, _ := strings.Cut(rest, `"`)
					series[name] = true
				}
			}
		}
		running, managed, cgroups := 0, 0, 0
		for _, p := range l.Items {
			i, ok := want[p.Name]
			if !ok || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning ||
				len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].ContainerID == "" {
				continue
			}
			running++
			if series[p.Name] {
				managed++
			}
			if c.cgroupsManaged(&p, i) {
				cgroups++
			}
		}
		if running < len(names) || managed < len(names) || cgroups < len(names) {
			return false, fmt.Errorf("%d running, %d with a workload series, %d with the agent's cgroup values, of %d", running, managed, cgroups, len(names))
		}
		return true, nil
	})
}

func (c *churn) cgroupsManaged(p *corev1.Pod, i int) bool {
	id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
	cpus, err := readFileErr(filepath.Join(c.n.podCgroup(nil, p, "cpuset"), id, "cpuset.cpus"))
	if err != nil {
		return false
	}
	set, err := cpuset.Parse(cpus)
	if err != nil || set.IsEmpty() || !set.Intersection(c.pinned).IsEmpty() {
		return false
	}
	if i%3 != 0 {
		return true
	}
	soft, err := readFileErr(filepath.Join(c.n.podCgroup(nil, p, "memory"), id, "memory.soft_limit_in_bytes"))
	return err == nil && soft == strconv.Itoa(16<<20)
}

// round runs waves: each deletes the 30 oldest pods and creates 30, and waits
// until the new ones are managed and the old ones gone.
func (c *churn) round(t *testing.T, agent string, waves int, fp func(testing.TB) footprint) {
	t.Helper()
	n := c.n
	before, first := n.metrics(t), fp(t)
	start := time.Now()
	defer n.profile(t, agent+"-churn")()
	for w := 0; w < waves; w++ {
		c.next++
		t0 := time.Now()
		old := c.live[:churnWave]
		fresh := make([]string, churnWave)
		for i := range fresh {
			fresh[i] = fmt.Sprintf("w%02d-%02d", c.next, i)
		}
		var wg sync.WaitGroup
		for _, name := range old {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := n.cp.Client.CoreV1().Pods(c.ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
					t.Errorf("delete %s: %v", name, err)
				}
			}()
		}
		c.create(t, fresh)
		wg.Wait()
		c.live = append(c.live[churnWave:], fresh...)
		c.waitManaged(t, fresh, 5*time.Minute)
		kubetest.WaitFor(t, "the wave's deleted pods to be gone", 5*time.Minute, func(ctx context.Context) (bool, error) {
			l, err := n.cp.Client.CoreV1().Pods(c.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			if len(l.Items) != len(c.live)+1 {
				return false, fmt.Errorf("%d pods", len(l.Items))
			}
			return true, nil
		})
		t.Logf("%s agent, wave %d: %d deleted, %d created, running and managed in %s; %s",
			agent, c.next, churnWave, churnWave, time.Since(t0).Round(100*time.Millisecond), fp(t))
	}
	last, after := fp(t), n.metrics(t)
	p50, p99, count := histogramQuantiles(before, after, "locus_reconcile_duration_seconds")
	t.Logf("%s agent, %d pods, %d waves of %d in %s: %.1f %% of a CPU; memory first %s → last %s; %.0f reconciles, p50 %.1f ms, p99 %.1f ms",
		agent, len(c.live), waves, churnWave, time.Since(start).Round(time.Second),
		100*float64(last.cpu-first.cpu)/float64(time.Since(start)), first, last, count, p50*1000, p99*1000)
	if e := after["locus_reconcile_errors_total"] - before["locus_reconcile_errors_total"]; e != 0 {
		t.Errorf("%v reconciles failed during the %s round", e, agent)
	}
}

// hostAgentPID is the host-process agent's pid on a chart-mode node
// (hack/e2e.sh start host-agent).
func (n *e2eNode) hostAgentPID(t testing.TB) int {
	t.Helper()
	pid, err := strconv.Atoi(readFile(t, filepath.Join(n.dir, "pids", "agent")))
	if err != nil {
		t.Fatalf("pid of the host agent: %v", err)
	}
	return pid
}

// profile, with LOCUS_E2E_PROFILE=DIR and the agent run with --profiling
// (LOCUS_E2E_AGENT_ARGS=--profiling), records the agent's CPU profile from
// now until the returned stop, as DIR/name.pprof (go tool pprof reads it).
func (n *e2eNode) profile(t *testing.T, name string) (stop func()) {
	t.Helper()
	dir := os.Getenv("LOCUS_E2E_PROFILE")
	if dir == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The profile ends at seconds or when the request is cancelled;
		// a cancelled one returns nothing, so it asks for slices of 20 s.
		for i := 0; ctx.Err() == nil; i++ {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.agentMetrics+"/debug/pprof/profile?seconds=20", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Logf("profile %s: %v %s", name, err, resp.Status)
				return
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.pprof", name, i)), b, 0o644); err != nil {
				t.Logf("profile %s: %v", name, err)
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}
