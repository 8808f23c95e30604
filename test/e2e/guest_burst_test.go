package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
)

// The CPU binding seed's go-demo Deployment with cpu-policy static-burst
// (four replicas, request 1 CPU, limit 4), unchanged, on the guest's two NUMA
// nodes of four CPUs: each replica gets four CPUs of one node, the first two
// a node each, so the replicas hold all eight CPUs and no CPU carries more
// than two of them (docs/allocator.md, static-burst); each container's
// cpuset.cpus is its decision.
func TestGuestSeedStaticBurst(t *testing.T) {
	n := needGuest(t)
	ns := n.namespace(t, "seed-burst")
	n.applySeed(t, ns, "pkg/scheduler/integration/testdata/go-demo-static-burst.yaml")
	type decision struct {
		CPUSet    string `json:"cpuset"`
		NUMANodes []int  `json:"numaNodes"`
	}
	placed := map[string]cpuset.CPUSet{}
	kubetest.WaitFor(t, "four replicas bound with "+resourceStatus, podTimeout, func(ctx context.Context) (bool, error) {
		l, err := n.cp.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=go-demo"})
		if err != nil {
			return false, err
		}
		clear(placed)
		for _, p := range l.Items {
			var d decision
			if p.Spec.NodeName == "" || json.Unmarshal([]byte(p.Annotations[resourceStatus]), &d) != nil {
				continue
			}
			cpus, err := cpuset.Parse(d.CPUSet)
			if err != nil || cpus.Size() != 4 || len(d.NUMANodes) != 1 {
				t.Errorf("%s: %s %q, want 4 CPUs of one NUMA node", p.Name, resourceStatus, p.Annotations[resourceStatus])
			}
			placed[p.Name] = cpus
		}
		if len(placed) != 4 {
			return false, fmt.Errorf("%d of %d pods bound", len(placed), len(l.Items))
		}
		return true, nil
	})
	held := map[int]int{}
	all := cpuset.New()
	for name, cpus := range placed {
		t.Logf("%s: %s", name, cpus)
		all = all.Union(cpus)
		for _, id := range cpus.UnsortedList() {
			held[id]++
		}
		if len(nodesOf(t, cpus)) != 1 {
			t.Errorf("%s: cpus %s span NUMA nodes %s", name, cpus, nodesOf(t, cpus))
		}
	}
	if all.Size() != 8 {
		t.Errorf("the replicas hold %s, want all 8 CPUs before any is shared", all)
	}
	for id, k := range held {
		if k > 2 {
			t.Errorf("cpu %d holds %d replicas, want at most 2", id, k)
		}
	}
	for name, cpus := range placed {
		p := n.waitRunning(t, ns, name)
		waitFile(t, filepath.Join(n.containerCgroup(t, p, "go-demo", ""), "cpuset.cpus"), cpus.String())
		n.waitEvent(t, ns, "Pod", name, corev1.EventTypeNormal, "CPUsAssigned")
	}
}
