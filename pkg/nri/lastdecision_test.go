package nri

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/source"
)

// setsFake is a source keeping the last decision's cpuset of its pods, by
// UID; only its PodCPUSet is called.
type setsFake struct {
	source.Source
	sets map[string]decide.PodCPUSet
}

func (f setsFake) PodCPUSet(ref source.PodRef) (decide.PodCPUSet, bool) {
	s, ok := f.sets[ref.UID]
	return s, ok
}

// emitted records the reasons of the events emitted.
type emitted struct {
	mu      sync.Mutex
	reasons []string
}

func (e *emitted) Emit(_, reason, _, _ string, _ ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reasons = append(e.reasons, reason)
}

// A container created while the loop is held (a long reconcile) past the
// plugin's wait is created on its pod's CPUs from the last decision, well
// inside the runtime's request timeout, rather than unpinned; a pod the
// last decision gave no cpuset (not decided yet, container scope) still
// starts unpinned, with its Warning. Nothing is decided meanwhile.
func TestCreatedFromTheLastDecisionWhenTheLoopIsLate(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets map[string]decide.PodCPUSet
		want string // cpuset.cpus created with; "" unpinned
	}{
		{"pod decided before", map[string]decide.PodCPUSet{"uid1": {CPUs: "4-7", Mems: "1"}}, "4-7"},
		{"pod not decided yet", map[string]decide.PodCPUSet{"uid2": {CPUs: "4-7", Mems: "1"}}, ""},
		{"source keeps no cpusets", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := filepath.Join(socketDir(t), "nri.sock")
			rt := newRuntime(t, sock)
			rt.Start(t)
			var src source.Source
			if tc.sets != nil {
				src = setsFake{sets: tc.sets}
			}
			release := make(chan struct{})
			defer close(release)
			decisions := 0
			creates := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c"}, []string{"result"})
			ev := &emitted{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := NewLoopHandler(ctx, Loop{Creates: creates, Wake: func() {}, Events: ev, Source: src,
				// The loop is held (a reconcile) until the test ends.
				Call: func(ctx context.Context, fn func()) bool {
					select {
					case <-release:
						fn()
						return true
					case <-ctx.Done():
						return false
					}
				},
				Answer: func(reqs []Request) []Answer { decisions++; return make([]Answer, len(reqs)) }})
			var log logBuf
			startPlugin(t, h, Options{Socket: sock}, &log)
			rt.WaitRegistered(t, 1)

			start := time.Now()
			r, err := rt.Create(testPod, ctr("app", ""))
			took := time.Since(start)
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			res := r.GetAdjust().GetLinux().GetResources().GetCpu()
			if res.GetCpus() != tc.want {
				t.Errorf("created with cpuset.cpus %q, want %q", res.GetCpus(), tc.want)
			}
			if tc.want != "" && res.GetMems() != "1" {
				t.Errorf("created with cpuset.mems %q, want 1", res.GetMems())
			}
			if took >= 2*time.Second {
				t.Errorf("answered after %v: not inside the runtime's request timeout (2 s)", took)
			}
			if decisions != 0 {
				t.Errorf("%d decisions made while the loop was held", decisions)
			}
			wantLast, wantUnpinned := 0.0, 1.0
			if tc.want != "" {
				wantLast, wantUnpinned = 1, 0
			}
			if got := testutil.ToFloat64(creates.WithLabelValues(ResultLastDecision)); got != wantLast {
				t.Errorf("counted %v %s, want %v", got, ResultLastDecision, wantLast)
			}
			if got := testutil.ToFloat64(creates.WithLabelValues("CreatedUnpinned")); got != wantUnpinned {
				t.Errorf("counted %v CreatedUnpinned, want %v", got, wantUnpinned)
			}
		})
	}
}

// The answer from the last decision is given only when the loop does not
// answer: a loop that answers in time decides, even where the last
// decision has a cpuset; an error of the decision itself stands.
func TestLastDecisionOnlyWhenTheLoopIsLate(t *testing.T) {
	creates := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c"}, []string{"result"})
	wrong := errors.New("CPUs taken since the scheduler chose")
	h := NewLoopHandler(context.Background(), Loop{Creates: creates, Wake: func() {}, Events: &emitted{},
		Source: setsFake{sets: map[string]decide.PodCPUSet{"uid1": {CPUs: "4-7", Mems: "1"}}},
		Call:   func(_ context.Context, fn func()) bool { fn(); return true },
		Answer: func(reqs []Request) []Answer {
			out := make([]Answer, len(reqs))
			out[0].Values.CPUs = "2-3"
			out[1].Err = wrong
			return out
		}})
	pod := Pod{Namespace: "default", Name: "web", UID: "uid1"}
	out := h.Answer(context.Background(), []Request{{Pod: pod, Container: Container{Name: "a"}}, {Pod: pod, Container: Container{Name: "b"}}})
	if out[0].Values.CPUs != "2-3" || !errors.Is(out[1].Err, wrong) {
		t.Errorf("the loop's answer: %+v, want its own decision and error", out)
	}
	if got := testutil.ToFloat64(creates.WithLabelValues(ResultLastDecision)); got != 0 {
		t.Errorf("counted %v %s with the loop answering", got, ResultLastDecision)
	}
}
