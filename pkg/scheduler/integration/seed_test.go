package integration

import (
	"testing"

	cpualloc "github.com/locus-project/locus/pkg/cpuset"
)

// The seed's manifests, unchanged: go-demo (4 replicas, request 1, limit
// 4), the same with cpu-policy static-burst, and nginx (2 replicas, request
// = limit = 4, nodeSelector policy=intel7), on three kwok nodes with an
// agent each. Every pod is bound with a decision; per node, exclusive CPUs
// are disjoint whole cores of one NUMA node, static-burst pods share CPUs
// nobody holds alone; each agent reports exactly those CPUs back.
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
	shared := map[string]int{}
	for name, p := range waitScheduled(t, burstNS, burst) {
		all[burstNS+"/"+name] = p
		if p.rs.Policy != cpualloc.StaticBurst || p.rs.CPUs.Size() != 4 {
			t.Errorf("%s: %s with %s, want 4 CPUs with static-burst", name, p.rs.CPUs, p.rs.Policy)
		}
		shared[p.pod.Spec.NodeName+":"+p.rs.CPUs.String()]++
	}
	// Four requests of one CPU fill four CPUs exactly: packed, they share.
	if len(shared) != 1 {
		t.Errorf("static-burst pods on %v: want the four on the same four CPUs", shared)
	}
	checkPlacements(t, all)
	waitReported(t, c, all)
}
