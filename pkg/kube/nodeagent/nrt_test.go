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

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
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
		in := nrt.Input{Node: name, Topology: topo, Reserved: reserved, Assignments: map[string]workload.Assignment{}}
		if len(cpus) > 0 {
			in.Assignments["ns/p"] = workload.Assignment{CPUs: cpuset.New(cpus...)}
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

// Every write stamps locus.io/heartbeat, and an unchanged object is
// rewritten every Heartbeat, so a scheduler can tell a silent agent from
// a quiet one; with Heartbeat 0 an unchanged object is not written again.
func TestPublisherHeartbeat(t *testing.T) {
	dyn, err := dynamic.NewForConfig(agentConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, every := range []time.Duration{time.Second, 0} {
		name := cp.CreateNamespace(t, "beat") // a unique node name
		o, err := nrt.Build(nrt.Input{Node: name, Topology: fixture.MustBuild(machine), Reserved: reserved})
		if err != nil {
			t.Fatal(err)
		}
		p := nrt.NewPublisher(dyn, slog.New(slog.NewTextHandler(io.Discard, nil)))
		p.MinInterval, p.Recheck, p.Heartbeat = 100*time.Millisecond, time.Minute, every
		var writes atomic.Int32
		p.Published = func(wrote bool) {
			if wrote {
				writes.Add(1)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		go p.Run(ctx)
		p.Set(o)
		var first time.Time
		waitNRT(t, name, "created with a heartbeat", func(o *nrt.Object, _ nrt.CPUTopology) bool {
			first, err = time.Parse(time.RFC3339, o.Metadata.Annotations[nrt.AnnotationHeartbeat])
			return err == nil
		})
		if d := time.Since(first); d < -time.Second || d > 5*time.Second {
			t.Errorf("heartbeat %s is %s from now", first, d)
		}
		time.Sleep(2500 * time.Millisecond)
		got, _, _ := nrtOf(t, name)
		last, err := time.Parse(time.RFC3339, got.Metadata.Annotations[nrt.AnnotationHeartbeat])
		switch {
		case err != nil:
			t.Errorf("heartbeat %v", err)
		case every > 0 && (!last.After(first) || writes.Load() < 2):
			t.Errorf("every %s: heartbeat %s after %s, %d writes: want it renewed", every, last, first, writes.Load())
		case every == 0 && (!last.Equal(first) || writes.Load() != 1):
			t.Errorf("no heartbeat: %s after %s, %d writes: want the one write", last, first, writes.Load())
		}
		cancel()
	}
}
