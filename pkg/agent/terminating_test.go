package agent

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/source"
)

// podNode is an agent fed by a fakeSource, on a fixture tree holding the
// source's pods, with a hook in the executor's originals store: it runs after
// the writer has read and planned a batch and before it writes, the moment
// a kubelet tearing a pod down catches the agent in.
type podNode struct {
	t      *testing.T
	tree   *cgroupTree
	src    *fakeSource
	listed *listHook
	a      *Agent
	hook   *hookStore
}

// listHook runs after, once, after the source's next snapshot.
type listHook struct {
	*fakeSource
	after func()
}

func (l *listHook) Snapshot(env source.Env) source.Snapshot {
	snap := l.fakeSource.Snapshot(env)
	if f := l.after; f != nil {
		l.after = nil
		f()
	}
	return snap
}

type hookStore struct {
	cgroup.OriginalStore
	mu     sync.Mutex
	before func() // once, at the next RecordOriginals
}

// Flush and Keys are the hooked store's, for the executor.
func (s *hookStore) Flush() error   { return s.OriginalStore.(interface{ Flush() error }).Flush() }
func (s *hookStore) Keys() []string { return s.OriginalStore.(interface{ Keys() []string }).Keys() }

func (s *hookStore) RecordOriginals(v map[string]string) error {
	s.mu.Lock()
	f := s.before
	s.before = nil
	s.mu.Unlock()
	if f != nil {
		f()
	}
	return s.OriginalStore.RecordOriginals(v)
}

func newPodNode(t *testing.T, v cgroup.Version, ws ...source.Workload) *podNode {
	t.Helper()
	n := &podNode{t: t, tree: newCgroupTree(t, v, true, "0-3")}
	for _, w := range ws {
		n.tree.mkcg(w.Plan.Containers[0].Cgroup)
	}
	n.src = &fakeSource{snap: source.Snapshot{Reserved: cpuset.New(0),
		SLO: lsLow50(t), Workloads: ws}}
	n.listed = &listHook{fakeSource: n.src}
	a := newSourceAgent(t, n.tree, n.listed, n.src)
	n.a, n.hook = a, &hookStore{OriginalStore: a.originals}
	store := a.originals
	a.originals = n.hook
	var err error
	if a.exec, err = a.newExecutor(); err != nil { // on the hooked store
		t.Fatal(err)
	}
	a.originals = store // read by the tests
	return n
}

func (n *podNode) setPods(ws ...source.Workload) {
	n.src.mu.Lock()
	n.src.snap.Workloads = ws
	n.src.mu.Unlock()
}

// removeCgroup removes a cgroup in every hierarchy, as the kubelet does.
func (n *podNode) removeCgroup(rel string) {
	n.t.Helper()
	for _, c := range n.tree.controllers() {
		if err := os.RemoveAll(n.tree.dir(c, rel)); err != nil {
			n.t.Fatal(err)
		}
	}
}

// quietReconcile reconciles and fails the test on any error or Warning.
func (n *podNode) quietReconcile(what string) []eventlog.Event {
	n.t.Helper()
	n.src.mu.Lock()
	from := len(n.src.events)
	n.src.mu.Unlock()
	errorsBefore := testutil.ToFloat64(n.a.metrics.Errors)
	res := n.a.Reconcile()
	if len(res.Errors) > 0 {
		n.t.Errorf("%s: errors %v", what, res.Errors)
	}
	if got := testutil.ToFloat64(n.a.metrics.Errors); got != errorsBefore {
		n.t.Errorf("%s: locus_reconcile_errors_total went from %v to %v", what, errorsBefore, got)
	}
	n.src.mu.Lock()
	evs := append([]eventlog.Event(nil), n.src.events[from:]...)
	n.src.mu.Unlock()
	for _, e := range evs {
		if e.Type == eventlog.Warning {
			n.t.Errorf("%s: warning %s %s: %s", what, e.Reason, e.Workload, e.Message)
		}
	}
	return evs
}

func (n *podNode) assignment(name string) cpuset.CPUSet {
	n.t.Helper()
	c, err := n.a.store.Load()
	if err != nil {
		n.t.Fatal(err)
	}
	return c.Assignments[name].CPUs
}

func (n *podNode) originalsOf(cg string) []string {
	var out []string
	for _, k := range n.a.originals.(interface{ Keys() []string }).Keys() {
		if strings.Contains(k, cg) {
			out = append(out, k)
		}
	}
	return out
}

func hasEvent(evs []eventlog.Event, reason, workload string) bool {
	for _, e := range evs {
		if e.Reason == reason && e.Workload == workload {
			return true
		}
	}
	return false
}

// A pod being deleted keeps its CPUs, quietly, while the kubelet removes its
// containers' cgroups: nothing is written for it, nothing is reported, and
// the shared pool still leaves its CPUs out. Once its pod cgroup is gone and
// the source drops it, its CPUs go back to the pool.
func TestTerminatingPodKeepsCPUsQuietly(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			a, b := pod("a", 2), pod("b", 0)
			n := newPodNode(t, v, a, b)
			n.quietReconcile("start")
			held := n.assignment("ns/a")
			if held.Size() != 2 {
				t.Fatalf("a holds %s", held)
			}
			shared := n.tree.file("kubepods/pod-b/app", "cpuset.cpus")

			term := a
			term.Plan.Terminating, term.Plan.Containers = true, nil // as podplan gives it
			n.setPods(term, b)
			n.removeCgroup("kubepods/pod-a/app")
			evs := n.quietReconcile("terminating, containers gone")
			if got := n.assignment("ns/a"); !got.Equals(held) || hasEvent(evs, "CPUsReleased", "ns/a") {
				t.Fatalf("terminating pod: assignment %s (held %s), events %+v", got, held, evs)
			}
			if got := n.tree.file("kubepods/pod-b/app", "cpuset.cpus"); got != shared {
				t.Errorf("shared pool changed from %s to %s while a terminates", shared, got)
			}

			n.removeCgroup("kubepods/pod-a")
			n.setPods(b)
			evs = n.quietReconcile("terminated")
			if !hasEvent(evs, "CPUsReleased", "ns/a") || !n.assignment("ns/a").IsEmpty() {
				t.Errorf("a's CPUs not released: %+v", evs)
			}
			if got, _ := cpuset.Parse(n.tree.file("kubepods/pod-b/app", "cpuset.cpus")); !held.IsSubsetOf(got) {
				t.Errorf("shared pool %s without a's CPUs %s", got, held)
			}
			if left := n.originalsOf("pod-a"); len(left) > 0 {
				t.Errorf("originals of a kept: %v", left)
			}
		})
	}
}

// Cgroups the kubelet removes between the agent's look and its writes, in
// a reconcile's writes or in a removal's restores, are no error and no
// warning; the removal completes and forgets them.
func TestCgroupRemovedWhileWrittenIsQuiet(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			a, b := pod("a", 2), pod("b", 0)
			n := newPodNode(t, v, a, b)
			n.hook.before = func() { n.removeCgroup("kubepods/pod-b") }
			n.quietReconcile("b removed mid-write")
			if got := n.tree.file("kubepods/pod-a/app", "memory.low"); got != "536870912" {
				t.Errorf("a not written: memory.low %q", got)
			}
			n.setPods(a)
			n.quietReconcile("b gone")

			// c is listed, then removed before the agent looks at it.
			podC := pod("c", 0)
			n.tree.mkcg("kubepods/pod-c/app")
			n.setPods(a, podC)
			n.listed.after = func() { n.removeCgroup("kubepods/pod-c") }
			n.quietReconcile("c removed after listing")
			n.setPods(a)
			n.quietReconcile("c gone")

			// a leaves the API with its cgroups still there; the kubelet
			// removes them as the agent restores them.
			n.setPods()
			n.hook.before = func() { n.removeCgroup("kubepods/pod-a") }
			evs := n.quietReconcile("a removed mid-restore")
			if !hasEvent(evs, "WorkloadRemoved", "ns/a") {
				t.Errorf("a's removal did not complete: %+v", evs)
			}
			ck, err := n.a.store.Load()
			if err != nil {
				t.Fatal(err)
			}
			if len(ck.Workloads) != 0 || len(ck.Assignments) != 0 {
				t.Errorf("checkpoint keeps %v %v", ck.Workloads, ck.Assignments)
			}
			if left := n.originalsOf("kubepods/pod-"); len(left) > 0 {
				t.Errorf("originals kept: %v", left)
			}
		})
	}
}
