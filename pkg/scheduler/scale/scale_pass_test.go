package scale

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/internal/kubetest"
)

// result is one scheduler's pass over the workload.
type result struct {
	kind  kind
	round int
	// elapsed runs on the pass's clock (see runPass) to the last pod seen
	// bound.
	elapsed time.Duration
	// firstBound is when the first pod was seen bound, on the same clock.
	firstBound time.Duration
	// e2e is each pod's creation (the call sent) to its binding (seen by a
	// watch), sorted.
	e2e []time.Duration
	// attempt and algorithm are the scheduler's own histograms for this
	// pass: scheduling_attempt_duration_seconds (one successful attempt,
	// the cycle and the binding) and scheduling_algorithm_duration_seconds.
	attempt, algorithm histogram
	// sli and bind say where a pod's wait goes: pod_scheduling_sli_duration_seconds
	// runs from the pod's entering the scheduler's queue to its binding
	// (its wait in the queue, its attempts and the binding), the other is
	// the binding's call alone. What create->bound has beyond sli is the
	// way through the API server and the informers.
	sli, bind histogram
	// curve is create->bound's median in each fifth of the pass, the
	// pods in the order they were created: a queue that grows shows as a
	// rising curve, a cost per pod as a level one.
	curve    [curveParts]time.Duration
	attempts map[string]float64 // scheduling attempts by result
	requests map[string]float64 // the apiserver's, by verb and resource
	cpu      map[string]time.Duration
	load     [2]float64 // at the start and the end
	// rss is this process's peak resident set during the pass (the
	// scheduler when it runs here, with the creators and the watch, the
	// same for all), schedRSS the scheduler's own when it runs as a process.
	rss, schedRSS uint64
	// heap is what the scheduler retained when the pass ended: this
	// process's live Go heap after a collection with the scheduler
	// running, less the same after it stopped (0 when it runs as a
	// process of its own). The watch and the pass's pods are in both.
	heap uint64
	// refused are the pods seen unschedulable at least once.
	refused map[string]bool
	pods    []corev1.Pod
	ns      string // the pass's namespace, its pods removed before the next pass
}

func (r result) podsPerSec() float64 { return float64(len(r.e2e)) / r.elapsed.Seconds() }

// runPass has a scheduler of kind k schedule the workload in a namespace
// of its own and stops it; the caller removes the pods before the next
// pass, so that it finds the nodes as empty as this one did (and the last
// pass of a run does not wait for thousands of deletions). Streamed (the default), the
// scheduler is started and warmed up first, then the pods are created
// and the clock runs from the first creation to the last binding; with
// cfg.ahead the pods are all created first and the clock runs from the
// scheduler's start (its informers' sync included) to the last binding.
func runPass(t *testing.T, cfg config, k kind, round int, specs []podSpec) result {
	t.Helper()
	ns := cp.CreateNamespace(t, "scale")
	w := watchBound(t, ns, len(specs))
	defer w.stop()
	var s scheduler
	startNow := func() {
		var err error
		if s, err = start(t, k, cfg); err != nil {
			t.Fatal(err)
		}
	}
	stop := func() {
		if s != nil {
			if err := s.Stop(); err != nil {
				t.Errorf("%s: %v", k, err)
			}
			s = nil
		}
	}
	defer stop()

	var created []time.Time
	resetPeakRSS()
	if cfg.ahead {
		created = create(t, cfg, k, ns, specs)
	} else {
		startNow()
		warmUp(t, k, ns)
	}
	r := result{kind: k, round: round, load: [2]float64{loadAvg()}}
	m0 := readMeters(t, k, s)
	stopProfile := profile(t, fmt.Sprintf("%s-%d", k, round))
	t0 := time.Now()
	if cfg.ahead {
		startNow()
	} else {
		created = create(t, cfg, k, ns, specs)
		t0 = slices.MinFunc(created, func(a, b time.Time) int { return a.Compare(b) })
	}
	select {
	case <-w.done:
	case <-time.After(cfg.timeout):
		t.Fatalf("%s: %d of %d pods bound after %s", k, w.count(), len(specs), cfg.timeout)
	}
	readMeters(t, k, s).since(m0, &r)
	r.load[1] = loadAvg()
	r.rss = peakRSS(os.Getpid())
	if p, ok := s.(interface{ PID() int }); ok {
		r.schedRSS = peakRSS(p.PID())
	}
	r.refused = w.refusals()
	stopProfile()
	with := liveHeap()
	heapProfile(t, fmt.Sprintf("%s-%d", k, round))
	_, own := s.(interface{ PID() int })
	stop()
	if without := settleHeap(); !own && with > without {
		r.heap = with - without
	}

	var last time.Time
	first := time.Now()
	for i, sp := range specs {
		b := w.boundAt(sp.name)
		last, first = latest(last, b), earliest(first, b)
		r.e2e = append(r.e2e, max(b.Sub(created[i]), 0))
	}
	bound := make([]time.Time, len(specs))
	for i, sp := range specs {
		bound[i] = w.boundAt(sp.name)
	}
	r.curve = latencyCurve(created, bound)
	writeTrace(t, fmt.Sprintf("%s-%d", k, round), specs, created, w, t0)
	slices.Sort(r.e2e)
	r.elapsed, r.firstBound = last.Sub(t0), first.Sub(t0)

	list, err := cp.Client.CoreV1().Pods(ns).List(callCtx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.pods, r.ns = list.Items, ns
	return r
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// meters are the scheduler's metrics and the processes' CPU times at one
// moment; a pass takes the difference of two readings.
type meters struct {
	attempt, algorithm histogram
	sli, bind          histogram
	attempts           map[string]float64
	cpu                map[string]time.Duration
	requests           map[string]float64
}

func readMeters(t testing.TB, k kind, s scheduler) meters {
	families := schedulerMetrics(t, k, s)
	return meters{
		attempt:   schedulerHistogram(families, "scheduler_scheduling_attempt_duration_seconds", map[string]string{"result": "scheduled"}),
		algorithm: schedulerHistogram(families, "scheduler_scheduling_algorithm_duration_seconds", nil),
		sli:       schedulerHistogram(families, "scheduler_pod_scheduling_sli_duration_seconds", nil),
		bind:      schedulerHistogram(families, "scheduler_framework_extension_point_duration_seconds", map[string]string{"extension_point": "Bind"}),
		attempts:  schedulerCounts(families, "scheduler_schedule_attempts_total", "result"),
		cpu:       cpuTimes(),
		requests:  apiRequests(),
	}
}

func (m meters) since(before meters, r *result) {
	r.attempt, r.algorithm = m.attempt.since(before.attempt), m.algorithm.since(before.algorithm)
	r.sli, r.bind = m.sli.since(before.sli), m.bind.since(before.bind)
	r.attempts, r.cpu, r.requests = m.attempts, m.cpu, m.requests
	for k, n := range before.requests {
		r.requests[k] -= n
	}
	for k, n := range before.attempts {
		r.attempts[k] -= n
	}
	for k, d := range before.cpu {
		r.cpu[k] -= d
	}
}

// warmUp schedules one pod of the workload's kind and waits for it, so
// that the scheduler has read the cluster before the clock starts; it is
// then deleted.
func warmUp(t *testing.T, k kind, ns string) {
	t.Helper()
	sp := podSpec{name: "warm-up", cpuset: true, milli: 2000}
	p := sp.pod(ns, k)
	p.Labels["app"] = "warm-up"
	cp.CreatePod(t, p)
	kubetest.WaitFor(t, string(k)+" to bind the warm-up pod", 2*time.Minute, func(ctx context.Context) (bool, error) {
		got, err := cp.Client.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Spec.NodeName != "", nil
	})
	zero := int64(0)
	if err := cp.Client.CoreV1().Pods(ns).Delete(callCtx(t), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
}
