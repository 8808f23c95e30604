package nri

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/workload"
)

// lookupFake is a source whose pods become known once looked up, if it has
// them; only its Lookup is called.
type lookupFake struct {
	source.Source
	has    map[string]bool // the pods the API server has, by namespace/name
	known  map[string]bool // the pods the source lists
	asked  [][]source.PodRef
	answer error
}

func (f *lookupFake) Lookup(ctx context.Context, refs []source.PodRef) (int, error) {
	f.asked = append(f.asked, refs)
	if _, ok := ctx.Deadline(); !ok {
		return 0, errors.New("no deadline")
	}
	n := 0
	for _, r := range refs {
		if f.has[r.Namespace+"/"+r.Name] {
			f.known[r.Namespace+"/"+r.Name] = true
			n++
		}
	}
	return n, f.answer
}

// A container of a pod the source does not list yet is decided once the
// source has looked the pod up: the decision is asked again, with it; a pod
// the lookup does not find fails open, its error saying why; pods known
// cost no lookup.
func TestLoopHandlerLooksUpUnknownPods(t *testing.T) {
	f := &lookupFake{has: map[string]bool{"ns/late": true}, known: map[string]bool{"ns/a": true},
		answer: &source.PodGoneError{Namespace: "ns", Name: "gone"}}
	decisions := 0
	creates := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c"}, []string{"result"})
	l := Loop{Creates: creates, Wake: func() {}, Source: f,
		Call: func(_ context.Context, fn func()) bool { fn(); return true },
		Answer: func(reqs []Request) []Answer {
			decisions++
			ws := make([]*workload.Workload, 0, len(f.known))
			for name := range f.known {
				ws = append(ws, &workload.Workload{Name: name, Cgroup: "kubepods/" + name})
			}
			m := MatchWorkloads(reqs, ws)
			out := m.Failed(nil)
			for i := range out {
				if out[i].Err == nil {
					out[i].Values.CPUs = fmt.Sprint(decisions)
				}
			}
			return out
		}}
	h := NewLoopHandler(context.Background(), l)

	out := h.Answer(context.Background(), []Request{req("a", "app", nil)})
	if out[0].Err != nil || decisions != 1 || len(f.asked) != 0 {
		t.Fatalf("known pod: %+v after %d decisions, lookups %v", out, decisions, f.asked)
	}

	decisions = 0
	out = h.Answer(context.Background(), []Request{req("late", "app", nil), req("gone", "app", nil), req("late", "side", nil)})
	if len(f.asked) != 1 || len(f.asked[0]) != 2 || f.asked[0][0].Name != "late" || f.asked[0][1].Name != "gone" {
		t.Fatalf("looked up %v, want late and gone once each", f.asked)
	}
	if out[0].Err != nil || out[0].Values.CPUs != "2" || out[2].Err != nil {
		t.Errorf("the pod looked up: %+v, want decided by the second decision", out)
	}
	if !errors.Is(out[1].Err, ErrUnknownPod) || !source.Gone(out[1].Err, "ns", "gone") || !strings.Contains(out[1].Err.Error(), "gone from the API server") {
		t.Errorf("the pod not found: %v, want unknown and gone, saying why", out[1].Err)
	}
	if got := testutil.ToFloat64(creates.WithLabelValues("Decided")); got != 3 {
		t.Errorf("counted %v decided, want 3 (one per container answered, not per decision)", got)
	}

	// Nothing found: the first answer stands, no decision is made again.
	decisions = 0
	out = h.Answer(context.Background(), []Request{req("gone", "app", nil)})
	if decisions != 1 || !errors.Is(out[0].Err, ErrUnknownPod) {
		t.Errorf("nothing found: %d decisions, %+v", decisions, out)
	}
}
