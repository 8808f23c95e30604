package nri

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// How long a creation waited is observed by stage: the time until the loop
// took the batch up (queued), and until the answer (answered, never less).
// A call the loop did not take up in time is observed as answered only.
func TestAnswerTimesObserved(t *testing.T) {
	const held = 30 * time.Millisecond
	for _, taken := range []bool{true, false} {
		answers := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "t", Buckets: prometheus.ExponentialBuckets(0.001, 2, 12)}, []string{"stage"})
		h := NewLoopHandler(context.Background(), Loop{
			Call: func(ctx context.Context, f func()) bool {
				time.Sleep(held) // a reconcile holds the loop
				if !taken {
					return false
				}
				f()
				return true
			},
			Answer: func(reqs []Request) []Answer {
				time.Sleep(held) // the decision
				return make([]Answer, len(reqs))
			},
			Creates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c"}, []string{"result"}),
			Answers: answers,
		})
		h.Answer(context.Background(), []Request{{Pod: Pod{Namespace: "ns", Name: "p", UID: "u"}}})
		queued, qsum := observed(t, answers, StageQueued)
		done, dsum := observed(t, answers, StageAnswered)
		if done != 1 {
			t.Fatalf("taken %v: %d answered observations, want 1", taken, done)
		}
		if !taken {
			if queued != 0 {
				t.Errorf("a call the loop did not take: %d queued observations, want none", queued)
			}
			continue
		}
		if queued != 1 || qsum < held.Seconds() || dsum < qsum+held.Seconds() {
			t.Errorf("queued %d observations, %.3fs; answered %.3fs: want one queued of at least %v, answered at least %v later",
				queued, qsum, dsum, held, held)
		}
	}
}

// observed is the count and sum of stage's histogram.
func observed(t *testing.T, v *prometheus.HistogramVec, stage string) (uint64, float64) {
	t.Helper()
	var m dto.Metric
	if err := v.WithLabelValues(stage).(prometheus.Histogram).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}
