package nri

import (
	"context"
	"testing"
)

// A loop whose Call reports a call not carried out (its context ended)
// while carrying it out all the same, as the agent's can at shutdown: the
// batch ends once, without a panic, and its requests get a decision or
// none, never a torn one.
func TestBatchEndsOnce(t *testing.T) {
	for range 50 {
		decided := make(chan struct{})
		h := NewLoopHandler(context.Background(), Loop{
			Call: func(_ context.Context, f func()) bool {
				f()
				return false
			},
			Answer: func(reqs []Request) []Answer {
				defer close(decided)
				return make([]Answer, len(reqs))
			},
		})
		out, _, ok := h.decide(context.Background(), []Request{{Pod: Pod{Namespace: "ns", Name: "p", UID: "u"}}})
		<-decided
		if ok && len(out) != 1 {
			t.Fatalf("decided %v, %d decisions; want one or none", ok, len(out))
		}
	}
}
