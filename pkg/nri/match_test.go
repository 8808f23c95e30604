package nri

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

// The OCI spec carries the cpuset, on v2 memory.min, low and high, on v1 a
// positive soft limit; the wmark files stay the reconcile loop's.
func TestValuesOf(t *testing.T) {
	ops := []cgroup.Op{{Cgroup: "p/c", Knob: cgroup.CPUSetCPUs, Value: "2-3"}, {Cgroup: "p/c", Knob: cgroup.CPUSetMems, Value: "0"},
		{Cgroup: "p/c", Knob: cgroup.MemoryLow, Value: "1024"}, {Cgroup: "p/c", Knob: cgroup.MemorySoftLimit, Value: "2048"},
		{Cgroup: "p/d", Knob: cgroup.MemorySoftLimit, Value: "0"}}
	v2 := ValuesOf(ops, cgroup.V2)
	if want := (Values{CPUs: "2-3", Mems: "0", Unified: map[string]string{"memory.low": "1024"}}); !reflect.DeepEqual(v2["p/c"], want) {
		t.Errorf("v2: %+v, want %+v", v2["p/c"], want)
	}
	v1 := ValuesOf(ops, cgroup.V1)
	if want := (Values{CPUs: "2-3", Mems: "0", Reservation: 2048}); !reflect.DeepEqual(v1["p/c"], want) {
		t.Errorf("v1: %+v, want %+v", v1["p/c"], want)
	}
	if !v1["p/d"].IsZero() {
		t.Errorf("a zero soft limit set %+v", v1["p/d"])
	}
}

func req(pod, ctr string, labels map[string]string) Request {
	return Request{Pod: Pod{Namespace: "ns", Name: pod, Labels: labels}, Container: Container{Name: ctr}}
}

// A running container is its cgroup; one being created gets a key under its
// pod's, added to the workload; an unknown pod gets its error and says
// whether it asks for CPUs.
func TestMatchWorkloads(t *testing.T) {
	a := workload.Workload{Name: "ns/a", Cgroup: "kubepods/pod-a", CPU: workload.CPUNeed{Exclusive: true},
		Containers: []workload.Container{{Name: "app", Cgroup: "kubepods/pod-a/app"}}}
	reqs := []Request{req("a", "app", nil), req("a", "side", nil), req("b", "app", map[string]string{"cpuset-scheduler": "true"})}
	m := MatchWorkloads(reqs, []*workload.Workload{&a})
	if len(a.Containers) != 2 || a.Containers[1] != (workload.Container{Name: "side", Cgroup: "kubepods/pod-a/locus-nri-1"}) {
		t.Fatalf("containers %+v", a.Containers)
	}
	out := m.Answers([]cgroup.Op{{Cgroup: "kubepods/pod-a/app", Knob: cgroup.CPUSetCPUs, Value: "1"},
		{Cgroup: "kubepods/pod-a/locus-nri-1", Knob: cgroup.CPUSetCPUs, Value: "2"}}, cgroup.V2)
	if out[0].Values.CPUs != "1" || out[1].Values.CPUs != "2" || !out[0].Exclusive || !out[1].Exclusive {
		t.Errorf("decided %+v", out)
	}
	if out[2].Err == nil || !strings.Contains(out[2].Err.Error(), "pod ns/b is not known") || !out[2].Exclusive || !out[2].Values.IsZero() {
		t.Errorf("unknown pod: %+v", out[2])
	}
	bad := errors.New("no checkpoint")
	failed := MatchWorkloads(reqs, []*workload.Workload{&a}).Failed(bad)
	if failed[0].Err != bad || failed[1].Err != bad || failed[2].Err == bad {
		t.Errorf("failed %+v", failed)
	}
}

// A pod deleted and created again under the same namespace and name is a
// new pod (a new UID): while the agent still lists the old one, a container
// of the new pod is not paired with it, so it never gets the old pod's
// container cgroup or CPUs; it is a pod not known yet, to be looked up. A
// request or a workload without a UID (a runtime or a source that gives
// none) pairs by name as before.
func TestMatchWorkloadsPairsByUID(t *testing.T) {
	old := workload.Workload{Name: "ns/a", UID: "uid-old", Cgroup: "kubepods/poduid-old", CPU: workload.CPUNeed{Exclusive: true},
		Containers: []workload.Container{{Name: "app", Cgroup: "kubepods/poduid-old/c1"}}}
	renewed := req("a", "app", nil)
	renewed.Pod.UID = "uid-new"
	same := req("a", "app", nil)
	same.Pod.UID = "uid-old"
	noUID := req("a", "app", nil)
	m := MatchWorkloads([]Request{renewed, same, noUID}, []*workload.Workload{&old})
	out := m.Answers([]cgroup.Op{{Cgroup: "kubepods/poduid-old/c1", Knob: cgroup.CPUSetCPUs, Value: "3"}}, cgroup.V2)
	if !errors.Is(out[0].Err, ErrUnknownPod) || !out[0].Values.IsZero() || out[0].Exclusive {
		t.Errorf("the new pod's container was paired with the old pod: %+v", out[0])
	}
	if out[1].Err != nil || out[1].Values.CPUs != "3" || out[2].Err != nil || out[2].Values.CPUs != "3" {
		t.Errorf("the old pod's own container: %+v; without a UID: %+v", out[1], out[2])
	}
	if len(old.Containers) != 1 {
		t.Errorf("the old pod got the new pod's container: %+v", old.Containers)
	}
}

// A sandbox of a pod created again under a stopped pod's name does not
// bring the stopped one back into the decisions; the same pod's new
// sandbox does.
func TestNewSandboxOfAnotherPodKeepsTheOldStopped(t *testing.T) {
	h := NewLoopHandler(context.Background(), Loop{Answer: func(reqs []Request) []Answer { return make([]Answer, len(reqs)) }})
	h.stopped["ns/a"] = "uid-old"
	renewed := req("a", "app", nil)
	renewed.Pod.UID = "uid-new"
	h.run(&batch{reqs: []Request{renewed}, done: make(chan struct{})})
	if h.stopped["ns/a"] != "uid-old" {
		t.Fatalf("a new pod's sandbox forgot the stopped pod of the same name: %v", h.stopped)
	}
	again := req("a", "app", nil)
	again.Pod.UID = "uid-old"
	h.run(&batch{reqs: []Request{again}, done: make(chan struct{})})
	if _, ok := h.stopped["ns/a"]; ok {
		t.Fatalf("the stopped pod's own new sandbox left it stopped: %v", h.stopped)
	}
}

// A stopped sandbox's pod is left out until the source drops it; a new pod
// of the same name (another UID) is not.
func TestDropStopped(t *testing.T) {
	type w struct{ name, cg string }
	of := func(x w) (string, string) { return x.name, x.cg }
	ws := []w{{"ns/a", "kubepods/podaa_bb"}, {"ns/b", "kubepods/podcc"}}
	if kept, dropped := DropStopped(nil, ws, of); dropped || len(kept) != 2 {
		t.Errorf("no plugin: kept %v, dropped %v", kept, dropped)
	}
	h := NewLoopHandler(context.Background(), Loop{})
	h.stopped["ns/a"], h.stopped["ns/b"], h.stopped["ns/c"] = "aa-bb", "other", "cc"
	kept, dropped := DropStopped(h, ws, of)
	if !dropped || !reflect.DeepEqual(kept, []w{{"ns/b", "kubepods/podcc"}}) {
		t.Errorf("kept %v, dropped %v", kept, dropped)
	}
	if _, ok := h.stopped["ns/c"]; ok || len(h.stopped) != 2 {
		t.Errorf("stopped %v: ns/c is no longer listed", h.stopped)
	}
}

// A busy loop fails the decision open; a call carried out counts the
// decided containers; an unpinned container is counted and told.
func TestLoopHandler(t *testing.T) {
	var mu sync.Mutex
	var told []string
	creates := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c"}, []string{"result"})
	done := make(chan struct{}, 1)
	busy := true
	l := Loop{Creates: creates, Wake: func() {},
		Call: func(ctx context.Context, f func()) bool {
			if busy {
				return false
			}
			f()
			done <- struct{}{}
			return true
		},
		Answer: func(reqs []Request) []Answer {
			return []Answer{{Values: Values{CPUs: "1"}}, {Err: errors.New("x")}}
		},
		Events: emitter(func(reason string) { mu.Lock(); told = append(told, reason); mu.Unlock() })}
	h := NewLoopHandler(context.Background(), l)
	reqs := []Request{req("a", "app", map[string]string{"cpuset-scheduler": "true"}), req("b", "app", nil)}
	out := h.Answer(context.Background(), reqs)
	if len(out) != 2 || out[0].Err != ErrNoDecision || !out[0].Exclusive || out[1].Exclusive {
		t.Errorf("busy: %+v", out)
	}
	busy = false
	out = h.Answer(context.Background(), reqs)
	<-done
	if out[0].Values.CPUs != "1" || testutil.ToFloat64(creates.WithLabelValues("Decided")) != 1 {
		t.Errorf("decided %+v, counted %v", out, testutil.ToFloat64(creates.WithLabelValues("Decided")))
	}
	h.Unpinned(reqs[1].Pod, reqs[1].Container, errors.New("x"), true)
	<-done
	// A pod deleted before its container was made is counted, not told,
	// also when the lookup's error joins another pod's; another pod's
	// being gone is not this one's: only the last two calls reach the loop.
	gone := fmt.Errorf("looked up: %w", errors.Join(errors.New("pod ns/x: refused"), &source.PodGoneError{Namespace: "ns", Name: "b"}))
	h.Unpinned(reqs[1].Pod, reqs[1].Container, gone, false)
	h.Unpinned(reqs[1].Pod, reqs[1].Container, &source.PodGoneError{Namespace: "ns", Name: "x"}, false)
	h.Unpinned(reqs[1].Pod, reqs[1].Container, errors.New("x"), false)
	for range 3 { // two told, and time for a third that must not come
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(told, []string{"CreationRefused", "CreatedUnpinned", "CreatedUnpinned"}) || testutil.ToFloat64(creates.WithLabelValues("CreationRefused")) != 1 ||
		testutil.ToFloat64(creates.WithLabelValues("CreatedUnpinned")) != 3 {
		t.Errorf("told %v, counted %v unpinned", told, testutil.ToFloat64(creates.WithLabelValues("CreatedUnpinned")))
	}
}

type emitter func(reason string)

func (e emitter) Emit(_, reason, _, _ string, _ ...any) { e(reason) }

func TestPinningOff(t *testing.T) {
	if p := Pinning(nil); p.Path != status.PinAfterStart || p.Reason != "NRI is off (--nri=false)" {
		t.Errorf("%+v", p)
	}
}

// Requests that wait for a busy loop at the same time are decided together,
// in one decision, and each gets its own answer.
func TestLoopHandlerBatchesWaitingRequests(t *testing.T) {
	release := make(chan struct{})
	var decides atomic.Int32
	l := Loop{Creates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c"}, []string{"result"}), Wake: func() {},
		Events: emitter(func(string) {}),
		Call:   func(_ context.Context, f func()) bool { <-release; f(); return true },
		Answer: func(reqs []Request) []Answer {
			decides.Add(1)
			out := make([]Answer, len(reqs))
			for i, r := range reqs {
				out[i].Values.CPUs = r.Pod.Name
			}
			return out
		}}
	h := NewLoopHandler(context.Background(), l)
	const n = 5
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if out := h.Answer(context.Background(), []Request{req(fmt.Sprintf("p%d", i), "app", nil)}); len(out) == 1 {
				got[i] = out[0].Values.CPUs
			}
		})
	}
	for waiting := 0; waiting < n; {
		time.Sleep(time.Millisecond)
		h.mu.Lock()
		if h.open != nil {
			waiting = len(h.open.reqs)
		}
		h.mu.Unlock()
	}
	close(release)
	wg.Wait()
	if decides.Load() != 1 {
		t.Errorf("%d decisions for %d waiting requests, want one", decides.Load(), n)
	}
	for i := range n {
		if want := fmt.Sprintf("p%d", i); got[i] != want {
			t.Errorf("request %d answered %q, want %q", i, got[i], want)
		}
	}
}
