package integration

import (
	"testing"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

// The seed's manifests, unchanged: go-demo (4 replicas, request 1, limit
// 4), the same with cpu-policy static-burst, and nginx (2 replicas, request
// = limit = 4, nodeSelector policy=intel7), on three kwok nodes with an
// agent each. Every pod is bound with a decision; per node, exclusive CPUs
// are disjoint whole cores of one NUMA node, static-burst pods share CPUs
// nobody holds alone, and only once the free ones are used; every decision
// is signed for its pod on its node, and each agent applies it and reports
// exactly those CPUs back.
func TestSeedDeployments(t *testing.T) {
	c := newCluster(t, 3, true)
	startScheduler(t)
	burstNS := namespace(t, "burst") // the seed names both Deployments go-demo
	exclusive := append(createDeployment(t, "testdata/go-demo.yaml", c.ns), createDeployment(t, "testdata/nginx.yaml", c.ns)...)
	burst := createDeployment(t, "testdata/go-demo-static-burst.yaml", burstNS)

	all := map[string]placed{}
	for name, p := range waitScheduled(t, c.ns, exclusive) {
		all[c.ns+"/"+name] = p
		if p.rs.Policy != cpualloc.FullPCPUs || p.rs.CPUs.Size() != 4 {
			t.Errorf("%s: %s with %s, want 4 CPUs with full-pcpus", name, p.rs.CPUs, p.rs.Policy)
		}
	}
	holders := map[string]map[int]int{} // node -> cpu -> replicas on it
	replicas := map[string]int{}
	for name, p := range waitScheduled(t, burstNS, burst) {
		all[burstNS+"/"+name] = p
		if p.rs.Policy != cpualloc.StaticBurst || p.rs.CPUs.Size() != 4 || len(p.rs.NUMANodes) != 1 {
			t.Errorf("%s: %s with %s on nodes %v, want 4 CPUs of one NUMA node with static-burst", name, p.rs.CPUs, p.rs.Policy, p.rs.NUMANodes)
		}
		node := p.pod.Spec.NodeName
		if holders[node] == nil {
			holders[node] = map[int]int{}
		}
		replicas[node]++
		for _, id := range p.rs.CPUs.UnsortedList() {
			holders[node][id]++
		}
	}
	// Replicas do not stack while free CPUs allow: on a node, they hold as
	// many distinct CPUs as it has usable (16 less the reserved 0 and 8),
	// and no CPU carries more than two of them.
	for node, cpus := range holders {
		if want := min(4*replicas[node], 14); len(cpus) < want {
			t.Errorf("%d static-burst replicas on %s hold %d distinct CPUs %v, want %d", replicas[node], node, len(cpus), cpus, want)
		}
		for id, n := range cpus {
			if n > 2 {
				t.Errorf("cpu %d of %s holds %d static-burst replicas", id, node, n)
			}
		}
	}
	checkPlacements(t, all)
	checkSigned(t, all)
	waitReported(t, c, all)
}
