package scale

import (
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	wl "github.com/locus-project/locus/pkg/workload"
)

// check verifies a pass: every pod bound, no node given more CPU than it
// has; under locus-scheduler, every cpuset pod carries a decision of
// exactly its CPUs, never a reserved one, disjoint from the others on its
// node, and plain pods none. It returns how many decisions sit on one
// NUMA node.
func check(t *testing.T, r result, specs []podSpec) (oneNUMA, decisions int) {
	t.Helper()
	want := map[string]podSpec{}
	for _, s := range specs {
		want[s.name] = s
	}
	requested := map[string]int64{}
	held := map[string]cpuset.CPUSet{}
	bad := 0
	fail := func(format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf("%s round %d: "+format, append([]any{r.kind, r.round}, args...)...)
		}
	}
	for _, p := range r.pods {
		s, ok := want[p.Name]
		if !ok {
			continue
		}
		delete(want, p.Name)
		node := p.Spec.NodeName
		if node == "" {
			fail("pod %s not bound", p.Name)
			continue
		}
		requested[node] += s.milli
		raw, has := p.Annotations[wl.AnnotationResourceStatus]
		if r.kind == vanilla || !s.cpuset {
			if has {
				fail("pod %s has a decision %s", p.Name, raw)
			}
			continue
		}
		rs, err := wl.ParseResourceStatus(raw)
		switch {
		case !has || err != nil:
			fail("pod %s: no readable decision (%q: %v)", p.Name, raw, err)
			continue
		case int64(rs.CPUs.Size())*1000 != s.milli:
			fail("pod %s asked for %dm and got CPUs %s", p.Name, s.milli, rs.CPUs)
		case rs.CPUs.Intersection(reserved).Size() > 0:
			fail("pod %s got reserved CPUs: %s", p.Name, rs.CPUs)
		case rs.Policy == cpualloc.StaticBurst:
			fail("pod %s got policy %s", p.Name, rs.Policy)
		}
		if prev := held[node]; prev.Intersection(rs.CPUs).Size() > 0 {
			fail("pod %s on %s got CPUs %s, some already held: %s", p.Name, node, rs.CPUs, prev)
		}
		held[node] = held[node].Union(rs.CPUs)
		decisions++
		if len(rs.NUMANodes) == 1 {
			oneNUMA++
		}
	}
	for name := range want {
		fail("pod %s is missing", name)
	}
	capMilli := int64(shape.TotalCores()*shape.ThreadsPerCore) * 1000
	for node, m := range requested {
		if m > capMilli {
			fail("node %s was given %dm of CPU requests, it has %dm", node, m, capMilli)
		}
	}
	return oneNUMA, decisions
}
