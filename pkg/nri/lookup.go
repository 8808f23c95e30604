package nri

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/locus-project/locus/pkg/source"
)

// lookupTimeout bounds the lookup of the pods the source does not list
// yet. With the decisions before and after it, the answer stays within
// decideTimeout, and so within the runtime's request timeout; the loop is
// never held by it: the lookup runs off the loop, between two calls.
const lookupTimeout = 500 * time.Millisecond

// maxLookups bounds the pods looked up for one request: a synchronization
// offers every container of the node, and a burst of unknown pods there
// means the source is far behind, which a few lookups will not cure.
const maxLookups = 8

// lookUp asks the source (lk) for the pods of reqs it does not list yet (its
// watch lags behind the runtime) and, once it has found any, decides again:
// a container is then created with the decision the reconcile loop makes
// for its pod when the watch delivers it, through the same decide.Decide, saved in
// the checkpoint like any other. The first answer stands when nothing is
// found or the loop does not answer in time; a pod still unknown then fails
// open as before, its error saying why the lookup did not find it.
func (h *LoopHandler) lookUp(ctx context.Context, lk source.Lookup, reqs []Request, out []Answer, refs []source.PodRef) []Answer {
	lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	found, err := lk.Lookup(lctx, refs)
	cancel()
	if found > 0 {
		if again, _, ok := h.decide(ctx, reqs); ok {
			out = again
		}
	}
	if err != nil {
		for i := range out {
			if errors.Is(out[i].Err, ErrUnknownPod) {
				out[i].Err = fmt.Errorf("%w; looked up: %w", out[i].Err, err)
			}
		}
	}
	return out
}

// unknownPods are the pods of the requests answered ErrUnknownPod, each
// once, at most maxLookups of them.
func unknownPods(reqs []Request, out []Answer) []source.PodRef {
	seen := map[string]bool{}
	var refs []source.PodRef
	for i, d := range out {
		p := reqs[i].Pod
		key := p.Namespace + "/" + p.Name
		if !errors.Is(d.Err, ErrUnknownPod) || seen[key] || len(refs) == maxLookups {
			continue
		}
		seen[key] = true
		refs = append(refs, source.PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID})
	}
	return refs
}
