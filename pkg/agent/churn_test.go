package agent

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/source"
)

// agentSizes are the sizes of everything the agent keeps per workload, in
// memory and in its state directory.
type agentSizes struct {
	problems, containerNames, originals, checkpoint, assignments, status, series, supervised int
}

// containerNames is how many container cgroups the executor names in its
// events. Nothing but this test asks, so the executor has no method for it:
// the map is read through reflection, and a renamed field fails here
// rather than passing unmeasured.
func containerNames(t *testing.T, a *Agent) int {
	t.Helper()
	f := reflect.ValueOf(a.exec).Elem().FieldByName("containers")
	if f.Kind() != reflect.Map {
		t.Fatalf("execute.Executor has no map named containers (found %v): update this test", f.Kind())
	}
	return f.Len()
}

func (n *podNode) sizes() agentSizes {
	n.t.Helper()
	a := n.a
	ck, err := a.store.Load()
	if err != nil {
		n.t.Fatal(err)
	}
	mfs, err := a.metrics.Reg.Gather()
	if err != nil {
		n.t.Fatal(err)
	}
	series := 0
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "go_") && !strings.HasPrefix(mf.GetName(), "process_") {
			series += len(mf.GetMetric())
		}
	}
	supervised := a.sup.Supervised()
	return agentSizes{problems: len(a.mem.Problems), containerNames: containerNames(n.t, a),
		originals: len(a.originals.(interface{ Keys() []string }).Keys()), checkpoint: len(ck.Workloads),
		assignments: len(ck.Assignments), status: len(a.pub.Current().Workloads), series: series, supervised: supervised}
}

// Pods coming and going in waves, deleted as the kubelet deletes them
// (terminating while their containers' cgroups go, then their pod cgroup),
// leave nothing behind: after every wave everything the agent keeps per
// workload is back to its size after the first.
func TestChurnLeavesNothingBehind(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			stay := pod("stay", 0)
			n := newPodNode(t, v, stay)
			n.quietReconcile("start")
			var first agentSizes
			for wave := range 8 {
				var ws []source.Workload
				for i := range 6 {
					cpus := 0
					if i%3 == 0 { // two of six with a CPU of their own
						cpus = 1
					}
					w := pod(fmt.Sprintf("w%d-%d", wave, i), cpus)
					n.tree.mkcg(w.Plan.Containers[0].Cgroup)
					ws = append(ws, w)
				}
				n.setPods(append([]source.Workload{stay}, ws...)...)
				n.quietReconcile(fmt.Sprintf("wave %d up", wave))
				if got := n.sizes(); got.checkpoint != 7 || got.status != 7 {
					t.Fatalf("wave %d: %+v, want 7 workloads managed", wave, got)
				}
				for i := range ws {
					n.removeCgroup(ws[i].Plan.Containers[0].Cgroup)
					ws[i].Plan.Terminating, ws[i].Plan.Containers = true, nil
				}
				n.setPods(append([]source.Workload{stay}, ws...)...)
				n.quietReconcile(fmt.Sprintf("wave %d terminating", wave))
				for _, w := range ws {
					n.removeCgroup(w.Plan.Cgroup)
				}
				n.setPods(stay)
				n.quietReconcile(fmt.Sprintf("wave %d gone", wave))
				got := n.sizes()
				if wave == 0 {
					first = got
					if first.checkpoint != 1 || first.originals == 0 || first.series == 0 {
						t.Fatalf("after the first wave: %+v", first)
					}
				}
				if got != first {
					t.Fatalf("after wave %d the agent keeps %+v; after the first it kept %+v", wave, got, first)
				}
			}
		})
	}
}
