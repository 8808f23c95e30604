package scale

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/locus-project/locus/internal/kubetest"
)

// create creates the pods on cfg.creators goroutines, in order, as fast
// as they go or at cfg.rate, and returns when each creation was sent.
func create(t *testing.T, cfg config, k kind, ns string, specs []podSpec) []time.Time {
	t.Helper()
	sent := make([]time.Time, len(specs))
	t0 := time.Now()
	err := parallel(cfg.creators, len(specs), func(ctx context.Context, i int) error {
		if cfg.rate > 0 {
			time.Sleep(time.Until(t0.Add(time.Duration(float64(i) / cfg.rate * float64(time.Second)))))
		}
		sent[i] = time.Now()
		_, err := cp.Client.CoreV1().Pods(ns).Create(ctx, specs[i].pod(ns, k), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("creating pods: %v", err)
	}
	return sent
}

// bindWatch records when each pod of ns is first seen bound, and which
// pods the scheduler marked unschedulable on the way.
type bindWatch struct {
	mu      sync.Mutex
	bound   map[string]time.Time
	refused map[string]bool
	want    int
	done    chan struct{}
	stop    func()
}

func watchBound(t *testing.T, ns string, want int) *bindWatch {
	t.Helper()
	w := &bindWatch{bound: map[string]time.Time{}, refused: map[string]bool{}, want: want, done: make(chan struct{})}
	f := informers.NewSharedInformerFactoryWithOptions(cp.Client, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=scale" }))
	seen := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		if p.Spec.NodeName != "" {
			w.mark(p.Name)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				w.markRefused(p.Name)
			}
		}
	}
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, o any) { seen(o) }}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("pod informer did not sync")
	}
	w.stop = func() { cancel(); f.Shutdown() }
	return w
}

func (w *bindWatch) mark(name string) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.bound[name]; ok {
		return
	}
	w.bound[name] = now
	if len(w.bound) == w.want {
		close(w.done)
	}
}

func (w *bindWatch) markRefused(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.refused[name] = true
}

func (w *bindWatch) refusals() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.refused)
}

func (w *bindWatch) boundAt(name string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bound[name]
}

func (w *bindWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.bound)
}

// deletePods removes the pass's pods (one per spec) at once and waits
// until they are gone. One call per pod: a collection delete of thousands
// outlasts the apiserver's request timeout on a loaded machine.
func deletePods(t *testing.T, ns string, pods []podSpec) {
	t.Helper()
	zero := int64(0)
	err := parallel(16, len(pods), func(ctx context.Context, i int) error {
		err := cp.Client.CoreV1().Pods(ns).Delete(ctx, pods[i].name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatalf("deleting the pods of %s: %v", ns, err)
	}
	kubetest.WaitFor(t, "the pods of "+ns+" to be gone", 5*time.Minute+time.Duration(len(pods))*20*time.Millisecond, func(ctx context.Context) (bool, error) {
		list, err := cp.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err
		}
		if n := len(list.Items); n > 0 {
			return false, fmt.Errorf("pods left, the first %s", list.Items[0].Name)
		}
		return true, nil
	})
}

// profile writes this process's CPU profile of the pass to
// $LOCUS_SCHED_CPUPROFILE/<name>.pprof when that directory is set.
func profile(t *testing.T, name string) (stop func()) {
	t.Helper()
	dir := os.Getenv("LOCUS_SCHED_CPUPROFILE")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// writeTrace writes each pod's creation and binding, in seconds from the
// start of the clock, to $LOCUS_SCHED_TRACE/<name>.csv when that directory is
// set: to see when a scheduler fell behind.
func writeTrace(t *testing.T, name string, specs []podSpec, created []time.Time, w *bindWatch, t0 time.Time) {
	t.Helper()
	dir := os.Getenv("LOCUS_SCHED_TRACE")
	if dir == "" {
		return
	}
	var b strings.Builder
	b.WriteString("pod,cpuset,millicpu,created_s,bound_s\n")
	for i, sp := range specs {
		fmt.Fprintf(&b, "%s,%t,%d,%.4f,%.4f\n", sp.name, sp.cpuset, sp.milli,
			created[i].Sub(t0).Seconds(), w.boundAt(sp.name).Sub(t0).Seconds())
	}
	if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func callCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
