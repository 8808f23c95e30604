package plugin

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	dynfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/locus-project/locus/pkg/kube/nrt"
)

// A pod refused because the plugin's NodeResourceTopology informer was
// still listing (as at 5000 nodes, where the list takes longer than the
// first cycle waits) is retried once the informers have synced, and that
// retry is not refused. The framework has no event of its own for the end
// of the sync: a pod left refused waits in its unschedulable pool for up
// to 5 minutes. The retry here runs as soon as the pod is activated, as the
// scheduling queue may run it; retries during the sync are refused.
func TestRefusedWhileSyncingRetriedOnceSynced(t *testing.T) {
	listed := make(chan struct{})
	holdList := func(dyn *dynfake.FakeDynamicClient) {
		dyn.PrependReactor("list", nrt.GVR.Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
			<-listed
			return false, nil, nil // on to the tracker's list
		})
	}
	e := newEnvWith(t, holdList, nil, []*nrt.Object{report(t, "n1", nil), report(t, "n2", nil)})
	p := pod("p", nil)

	// The first cycle's wait ends with its context here.
	ctx, cancel := context.WithTimeout(e.ctx, 50*time.Millisecond)
	_, s := e.pl.PreFilter(ctx, framework.NewCycleState(), p)
	cancel()
	if s.Code() != framework.Unschedulable {
		t.Fatalf("PreFilter while the reports are being listed: %v, want Unschedulable", s)
	}

	var refused, passed atomic.Int32
	e.act.mu.Lock()
	e.act.retry = func(pod *v1.Pod) {
		if _, s := e.pl.PreFilter(e.ctx, framework.NewCycleState(), pod); s.Code() == framework.Unschedulable {
			refused.Add(1)
		} else {
			passed.Add(1)
		}
	}
	e.act.mu.Unlock()
	close(listed)
	waitFor(t, "the refused pod to be retried and pass", func() bool { return passed.Load() > 0 })
	t.Logf("retries refused during the sync: %d", refused.Load())
}
