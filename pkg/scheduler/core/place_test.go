package core

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// Pods placed back to back on one node, before the agent reports any of
// them, get disjoint exclusive CPUs: whole cores of one NUMA node, never a
// reserved CPU, until the node is full.
func TestBackToBackPodsAreDisjoint(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      Request
		fit    int // pods that fit on the node
		sizeOK func(cpus int) bool
	}{
		{"default 4 CPUs", req(4, "", 0), 3, func(n int) bool { return n == 4 }},
		{"full-pcpus 2 CPUs", req(2, cpualloc.FullPCPUs, 0), 7, func(n int) bool { return n == 2 }},
		{"spread 4 CPUs", req(4, cpualloc.SpreadByPCPUs, 0), 3, func(n int) bool { return n == 4 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCluster()
			c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
			topo := c.Snapshot().Get("n1").Topology()
			taken := cpuset.New()
			for i := 0; ; i++ {
				p, err := place(t, c, fmt.Sprintf("ns/p%d", i), "n1", tc.r)
				if err != nil {
					if i != tc.fit || kind(err) != Insufficient {
						t.Fatalf("pod %d: %v (kind %d); want %d pods to fit, then Insufficient", i, err, kind(err), tc.fit)
					}
					break
				}
				cpus := p.Result.CPUs
				switch {
				case !tc.sizeOK(cpus.Size()):
					t.Fatalf("pod %d got %s", i, cpus)
				case !cpus.Intersection(taken).IsEmpty():
					t.Fatalf("pod %d got %s, overlapping %s", i, cpus, taken)
				case !cpus.Intersection(reservedCore).IsEmpty():
					t.Fatalf("pod %d got reserved CPUs: %s", i, cpus)
				case len(p.Result.NUMANodes) != 1 || len(topo.NodesOf(cpus)) != 1:
					t.Fatalf("pod %d got %s on NUMA nodes %v", i, cpus, p.Result.NUMANodes)
				case tc.r.Policy != cpualloc.SpreadByPCPUs && !wholeCores(topo, cpus):
					t.Fatalf("pod %d got %s: not whole cores", i, cpus)
				}
				taken = taken.Union(cpus)
			}
		})
	}
}

// static-burst pods (request 1 on limit 4 adds 250 millicores to each CPU)
// keep to CPUs and cores of their own while free CPUs allow, stay in one NUMA
// node, and share, the least loaded CPUs first, only once the node fills;
// exclusive pods never land on their CPUs.
func TestStaticBurst(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
	burst := req(4, cpualloc.StaticBurst, 1000)
	var held cpuset.CPUSet
	for i := range 3 {
		p := mustPlace(t, c, fmt.Sprintf("ns/b%d", i), "n1", burst)
		if !p.Result.CPUs.Intersection(held).IsEmpty() || p.Result.Policy != cpualloc.StaticBurst || len(p.Result.NUMANodes) != 1 {
			t.Fatalf("burst pod %d got %s (%s, nodes %v), sharing %s while free CPUs are left", i, p.Result.CPUs, p.Result.Policy, p.Result.NUMANodes, held)
		}
		held = held.Union(p.Result.CPUs)
	}
	// 14 usable CPUs, 12 carry burst load: one whole core left.
	ex := mustPlace(t, c, "ns/ex", "n1", req(2, "", 0))
	if !ex.Result.CPUs.Intersection(held).IsEmpty() {
		t.Fatalf("exclusive pod got %s, on static-burst CPUs %s", ex.Result.CPUs, held)
	}
	// The node is full: the fourth shares CPUs, within one NUMA node.
	fourth := mustPlace(t, c, "ns/b3", "n1", burst)
	if !fourth.Result.CPUs.IsSubsetOf(held) || len(fourth.Result.NUMANodes) != 1 {
		t.Fatalf("fourth burst pod got %s on nodes %v, want CPUs of the burst pods %s in one node", fourth.Result.CPUs, fourth.Result.NUMANodes, held)
	}
	v := c.Snapshot().Get("n1")
	for _, id := range fourth.Result.CPUs.List() {
		if v.State().BurstMilli[id] != 500 {
			t.Errorf("cpu %d carries %d millicores, want 500 (two pods)", id, v.State().BurstMilli[id])
		}
	}
	if got, want := v.FreeMilli(), int64(14000-4*4*250-2000); got != want {
		t.Errorf("free = %dm, want %dm (14 CPUs - 4 burst pods of 1000m - 2 exclusive)", got, want)
	}
}

// A node without a NodeResourceTopology, with one that cannot be read, or
// with one describing another machine is refused with a reason; pods never
// land on a guess.
func TestUnusableReports(t *testing.T) {
	good := publish(t, twoNode, "n1", reservedCore, nil)
	noAnnotation := publish(t, twoNode, "n2", reservedCore, nil)
	noAnnotation.Metadata.Annotations = nil
	badJSON := publish(t, twoNode, "n3", reservedCore, nil)
	badJSON.Metadata.Annotations[nrt.AnnotationCPUTopology] = "{"
	noZones := publish(t, twoNode, "n4", reservedCore, nil)
	noZones.Zones = nil

	c := NewCluster()
	c.SetNRT("n1", good)
	c.SetNRT("n2", noAnnotation)
	c.SetNRT("n3", badJSON)
	c.SetNRT("n4", noZones)
	snap := c.Snapshot()
	r := req(2, "", 0)
	for _, tc := range []struct {
		node     string
		nodeCPUs int64
		want     Kind
		says     string
	}{
		{"n0", 16, NoTopology, "no NodeResourceTopology"},
		{"n1", 32, Stale, "lists 16 online CPUs, the node reports 32"},
		{"n2", 16, BadTopology, "not published by the locus agent"},
		{"n3", 16, BadTopology, nrt.AnnotationCPUTopology},
		{"n4", 16, BadTopology, "no zones"},
	} {
		_, err := Place(snap.Get(tc.node), tc.nodeCPUs, r)
		if kind(err) != tc.want || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v (kind %d), want kind %d saying %q", tc.node, err, kind(err), tc.want, tc.says)
		}
		if reason := err.(*Unfit).Reason(r); strings.Contains(reason, tc.node) {
			t.Errorf("%s: reason %q names the node: the framework could not add nodes up", tc.node, reason)
		}
	}
	if _, err := Place(snap.Get("n1"), 16, r); err != nil {
		t.Errorf("n1 with matching capacity: %v", err)
	}
	// A good report replaces a bad one; a deleted one makes the node unusable.
	c.SetNRT("n3", publish(t, twoNode, "n3", reservedCore, nil))
	c.DeleteNRT("n1")
	snap = c.Snapshot()
	if _, err := Place(snap.Get("n3"), 16, r); err != nil {
		t.Errorf("n3 after a good report: %v", err)
	}
	if _, err := Place(snap.Get("n1"), 16, r); kind(err) != NoTopology {
		t.Errorf("n1 after its report was deleted: %v", err)
	}
}

// A request a node can never serve (full-pcpus on half a core) is Invalid,
// not Insufficient: preemption cannot help.
func TestInvalidForNode(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, nil))
	_, err := Place(c.Snapshot().Get("n1"), 16, req(3, cpualloc.FullPCPUs, 0))
	if kind(err) != Invalid || !strings.Contains(err.Error(), "not a multiple of 2") {
		t.Fatalf("full-pcpus 3: %v", err)
	}
}

// What the agent reports counts for the pods that exist; a pod the report
// still lists but that was deleted is free at once.
func TestReportedHoldings(t *testing.T) {
	held := map[string]workload.Assignment{
		"ns/running": {CPUs: cpuset.New(4, 5, 12, 13), Policy: cpualloc.FullPCPUs},
		"ns/deleted": {CPUs: cpuset.New(6, 7, 14, 15), Policy: cpualloc.FullPCPUs},
	}
	c := NewCluster()
	c.SetNRT("n1", publish(t, twoNode, "n1", reservedCore, held))
	c.SetPod("ns/running", "n1", nil) // bound, placed by the agent itself
	v := c.Snapshot().Get("n1")
	if want := cpuset.New(4, 5, 12, 13); !v.State().Exclusive.CPUSet().Equals(want) {
		t.Fatalf("exclusive %s, want %s (the deleted pod's CPUs are free)", v.State().Exclusive.CPUSet(), want)
	}
	c.DeletePod("ns/running")
	if v := c.Snapshot().Get("n1"); !v.State().Exclusive.IsEmpty() {
		t.Fatalf("exclusive %s after the pod was deleted, want none", v.State().Exclusive.CPUSet())
	}
}

// Scores: one L3 beats one NUMA node beats several; then MostAllocated
// prefers the fuller node and LeastAllocated the emptier.
func TestScores(t *testing.T) {
	c := NewCluster()
	c.SetNRT("split", publish(t, splitL3, "split", cpuset.New(), nil))
	v := c.Snapshot().Get("split")
	oneL3, err := Place(v, 0, req(4, "", 0))
	if err != nil || oneL3.Locality != OneL3 {
		t.Fatalf("4 CPUs on split L3s: %+v %v", oneL3, err)
	}
	oneNUMA, _ := Place(v, 0, req(6, "", 0))
	several, _ := Place(v, 0, req(12, "", 0))
	if oneNUMA.Locality != OneNUMA || several.Locality != SeveralNUMA {
		t.Fatalf("localities %d %d", oneNUMA.Locality, several.Locality)
	}
	if !(oneL3.Score > oneNUMA.Score && oneNUMA.Score > several.Score) || oneL3.Score > MaxScore || several.Score < 0 {
		t.Fatalf("scores L3 %d, NUMA %d, several %d", oneL3.Score, oneNUMA.Score, several.Score)
	}

	c.SetNRT("empty", publish(t, twoNode, "empty", reservedCore, nil))
	c.SetNRT("busy", publish(t, twoNode, "busy", reservedCore, nil))
	mustPlace(t, c, "ns/x", "busy", req(4, "", 0))
	snap := c.Snapshot()
	for _, tc := range []struct {
		s         Scoring
		preferred string
	}{{MostAllocated, "busy"}, {"", "busy"}, {LeastAllocated, "empty"}} {
		r := req(2, "", 0)
		r.Scoring = tc.s
		e, _ := Place(snap.Get("empty"), 16, r)
		b, _ := Place(snap.Get("busy"), 16, r)
		best := "empty"
		if b.Score > e.Score {
			best = "busy"
		}
		if best != tc.preferred || e.Locality != b.Locality {
			t.Errorf("%q: empty %d, busy %d: prefers %s, want %s", tc.s, e.Score, b.Score, best, tc.preferred)
		}
	}
}

// The CPUs a node's kubelet holds alone (its static CPU manager) are
// taken: pods are placed around them until none is left but theirs.
func TestKubeletCPUsAreTaken(t *testing.T) {
	kubeletCPUs := cpuset.New(1, 9, 4, 12) // a core on each NUMA node
	o, err := nrt.Build(nrt.Input{Node: "n1", Topology: fixture.MustBuild(twoNode), Reserved: reservedCore, Kubelet: kubeletCPUs})
	if err != nil {
		t.Fatal(err)
	}
	c := NewCluster()
	c.SetNRT("n1", o)
	if v := c.Snapshot().Get("n1"); v.FreeMilli() != 10000 {
		t.Fatalf("free %d millicores, want 10000 (16 CPUs, 2 reserved, 4 the kubelet's)", v.FreeMilli())
	}
	for i := 0; ; i++ {
		p, err := place(t, c, fmt.Sprintf("ns/p%d", i), "n1", req(2, cpualloc.FullPCPUs, 0))
		if err != nil {
			if i != 5 || kind(err) != Insufficient {
				t.Fatalf("pod %d: %v; want 5 pods of 2 CPUs to fit", i, err)
			}
			break
		}
		if both := p.Result.CPUs.Intersection(kubeletCPUs.Union(reservedCore)); !both.IsEmpty() {
			t.Fatalf("pod %d got %s, the kubelet's or reserved", i, both)
		}
	}
}
