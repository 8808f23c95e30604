package nodeagent_test

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/agent/plan"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// The publisher, as the agent's service account (create, get and update
// only): it creates the object, updates only what it owns, writes a burst
// of changes once, and recreates an object someone deleted.
func TestPublisher(t *testing.T) {
	dyn, err := dynamic.NewForConfig(agentConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	name := cp.CreateNamespace(t, "nrt") // a unique node name
	topo := fixture.MustBuild(machine)
	build := func(cpus ...int) *nrt.Object {
		in := nrt.Input{Node: name, Topology: topo, Reserved: reserved, Assignments: map[string]plan.Assignment{}}
		if len(cpus) > 0 {
			in.Assignments["ns/p"] = plan.Assignment{CPUs: cpuset.New(cpus...)}
		}
		o, err := nrt.Build(in)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	p := nrt.NewPublisher(dyn, slog.New(slog.NewTextHandler(io.Discard, nil)))
	p.MinInterval, p.Recheck = 400*time.Millisecond, 300*time.Millisecond
	var writes atomic.Int32
	p.Published = func(wrote bool) {
		if wrote {
			writes.Add(1)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Run(ctx)

	exclusive := func(want string) func(*nrt.Object, nrt.CPUTopology) bool {
		return func(_ *nrt.Object, ct nrt.CPUTopology) bool { return ct.Exclusive["ns/p"] == want }
	}
	p.Set(build(1))
	waitNRT(t, name, "created", exclusive("1"))

	// A label of someone else's survives updates.
	patch := []byte(`{"metadata": {"labels": {"example.com/owner": "someone"}}}`)
	if _, err := cp.Dynamic.Resource(nrt.GVR).Patch(callCtx(t), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	before := writes.Load()
	for _, c := range []int{2, 3, 4, 5} { // a burst within MinInterval
		p.Set(build(c))
	}
	waitNRT(t, name, "showing the burst's last state", exclusive("5"))
	time.Sleep(2 * p.MinInterval)
	if w := writes.Load() - before; w > 2 {
		t.Errorf("a burst of 4 changes took %d writes, want at most 2 (MinInterval)", w)
	}
	u, err := cp.Dynamic.Resource(nrt.GVR).Get(callCtx(t), name, metav1.GetOptions{})
	if err != nil || u.GetLabels()["example.com/owner"] != "someone" || u.GetLabels()[nrt.LabelManagedBy] != "locus" {
		t.Fatalf("labels after updates: %v, %v", u.GetLabels(), err)
	}

	// Deleted by someone: recreated at the next recheck, with no change.
	if err := cp.Dynamic.Resource(nrt.GVR).Delete(callCtx(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNRT(t, name, "recreated", exclusive("5"))
}
