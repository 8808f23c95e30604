package scale

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	wl "github.com/locus-project/locus/pkg/workload"
)

// quality is what a pass's decisions say about placement: how many cpuset
// pods got a decision, how many of those sit on one NUMA node, how many
// share a core with another pinned pod, and how many pods were refused at
// least once (every pass has room to spare: a refusal is always one while
// capacity existed).
type quality struct {
	decisions, oneNUMA, sharedCore, refused int
}

// check verifies a pass: every pod bound, no node given more CPU than it
// has; under locus-scheduler or koord-scheduler, every cpuset pod carries
// a decision of exactly its CPUs, never a reserved one, disjoint from the
// others on its node, and plain pods none.
func check(t *testing.T, r result, specs []podSpec) quality {
	t.Helper()
	want := map[string]podSpec{}
	for _, s := range specs {
		want[s.name] = s
	}
	requested := map[string]int64{}
	held := map[string]map[int]string{} // node -> CPU -> pod
	var q quality
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
		cpus, has, err := decision(r.kind, p.Annotations)
		if r.kind == vanilla || !s.cpuset {
			if has {
				fail("pod %s has a decision %s", p.Name, cpus)
			}
			continue
		}
		switch {
		case !has || err != nil:
			fail("pod %s: no readable decision (%v)", p.Name, err)
			continue
		case int64(cpus.Size())*1000 != s.milli:
			fail("pod %s asked for %dm and got CPUs %s", p.Name, s.milli, cpus)
		case cpus.Intersection(reserved).Size() > 0:
			fail("pod %s got reserved CPUs: %s", p.Name, cpus)
		}
		if held[node] == nil {
			held[node] = map[int]string{}
		}
		for _, c := range cpus.UnsortedList() {
			if other, taken := held[node][c]; taken {
				fail("pod %s on %s got CPU %d, already %s's", p.Name, node, c, other)
			}
			held[node][c] = p.Name
		}
		q.decisions++
		if numaNodes(cpus) == 1 {
			q.oneNUMA++
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
	q.sharedCore = sharingACore(held)
	q.refused = len(r.refused)
	return q
}

// decision is the CPU set a scheduler wrote on a pod, in its own protocol:
// Locus's resource status, or Koordinator's (its cpuset; a decision that
// names only NUMA nodes is not one of CPUs).
func decision(k kind, ann map[string]string) (cpus cpuset.CPUSet, has bool, err error) {
	switch k {
	case locus:
		raw, ok := ann[wl.AnnotationResourceStatus]
		if !ok {
			return cpuset.CPUSet{}, false, nil
		}
		rs, err := wl.ParseResourceStatus(raw)
		if err == nil && rs.Policy == cpualloc.StaticBurst {
			err = fmt.Errorf("policy %s", rs.Policy)
		}
		return rs.CPUs, true, err
	case koord:
		var rs struct {
			CPUSet string `json:"cpuset"`
		}
		raw, ok := ann[koordResourceStatus]
		if !ok {
			return cpuset.CPUSet{}, false, nil
		}
		if err := json.Unmarshal([]byte(raw), &rs); err != nil {
			return cpuset.CPUSet{}, true, fmt.Errorf("%s %q: %w", koordResourceStatus, raw, err)
		}
		if rs.CPUSet == "" {
			return cpuset.CPUSet{}, false, nil
		}
		cpus, err := cpuset.Parse(rs.CPUSet)
		return cpus, true, err
	}
	return cpuset.CPUSet{}, false, nil
}

// numaNodes counts the NUMA nodes of the machine's shape that cpus touch.
func numaNodes(cpus cpuset.CPUSet) int {
	seen := map[int]bool{}
	for _, c := range machine.CPUs {
		if cpus.Contains(c.ID) {
			seen[c.NUMA] = true
		}
	}
	return len(seen)
}

// sharingACore counts the pods holding a CPU whose core has a CPU another
// pod holds, node by node.
func sharingACore(held map[string]map[int]string) int {
	coreOf := map[int]int{}
	for _, c := range machine.CPUs {
		coreOf[c.ID] = c.Core
	}
	n := 0
	for _, owner := range held {
		coreOwners := map[int]map[string]bool{}
		for c, pod := range owner {
			if coreOwners[coreOf[c]] == nil {
				coreOwners[coreOf[c]] = map[string]bool{}
			}
			coreOwners[coreOf[c]][pod] = true
		}
		sharing := map[string]bool{}
		for _, pods := range coreOwners {
			if len(pods) > 1 {
				for p := range pods {
					sharing[p] = true
				}
			}
		}
		n += len(sharing)
	}
	return n
}
