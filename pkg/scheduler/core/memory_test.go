package core

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

const gib = 1 << 30

// memNode is twoNode with 8 GiB on each NUMA node and 512 huge pages of
// 2 MiB (1 GiB) on node 1 only.
var memNode = func() fixture.Shape {
	s := twoNode
	s.Name, s.MemoryPerNode = "2s-4c-ht-8g", 8*gib
	s.HugePages = []fixture.NodeHugePages{{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 512, Free: 512}}}
	return s
}()

// publishMem is publish with the pods' memory: what they hold counts
// against their zones.
func publishMem(t testing.TB, s fixture.Shape, node string, held map[string]workload.Assignment, mem map[string]cpualloc.Memory) *nrt.Object {
	t.Helper()
	o, err := nrt.Build(nrt.Input{Node: node, Topology: fixture.MustBuild(s), Reserved: reservedCore, Assignments: held, Memory: mem})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func memReq(cpus int, m cpualloc.Memory) Request {
	r := req(cpus, cpualloc.FullPCPUs, 0)
	r.Memory = m
	return r
}

// A node whose zones cannot hold the pod's memory is filtered, and the
// reason names the resource; the same node takes a pod asking no memory,
// or less, as before.
func TestMemoryShortNodeFiltered(t *testing.T) {
	held := map[string]workload.Assignment{
		"ns/a": {CPUs: cpuset.New(1, 9), Policy: cpualloc.FullPCPUs},
		"ns/b": {CPUs: cpuset.New(4, 12), Policy: cpualloc.FullPCPUs},
	}
	mem := map[string]cpualloc.Memory{"ns/a": {Bytes: 7 * gib}, "ns/b": {Bytes: 7 * gib}}
	c := NewCluster()
	c.SetNRT("n", publishMem(t, memNode, "n", held, mem))
	c.SetPod("ns/a", "n", nil)
	c.SetPod("ns/b", "n", nil)
	v := c.Snapshot().Get("n")
	for name, tc := range map[string]struct {
		m      cpualloc.Memory
		short  string
		reason string
	}{
		"memory":        {cpualloc.Memory{Bytes: 4 * gib}, "memory", "not enough free memory on the NUMA nodes that could also hold the pod's 2 CPUs (memory 4Gi)"},
		"hugepages-1Gi": {cpualloc.Memory{HugePages1Gi: gib}, "hugepages-1Gi", "not enough free hugepages-1Gi"},
		"hugepages-2Mi": {cpualloc.Memory{Bytes: gib, HugePages2Mi: 2 * gib}, "hugepages-2Mi", "(memory 1Gi, hugepages-2Mi 2Gi)"},
	} {
		t.Run(name, func(t *testing.T) {
			r := memReq(2, tc.m)
			_, err := Place(v, 0, r)
			u, ok := err.(*Unfit)
			if !ok || u.Kind != Insufficient || u.Short != tc.short || !strings.Contains(u.Reason(r), tc.reason) {
				t.Fatalf("Place = %v; want Insufficient, short of %s, reason with %q", err, tc.short, tc.reason)
			}
			if err := Fits(v, 0, r); err == nil {
				t.Fatal("Fits passed what Place refused")
			}
		})
	}
	for _, m := range []cpualloc.Memory{{}, {Bytes: gib}, {HugePages2Mi: 512 << 20}} {
		if p, err := Place(v, 0, memReq(2, m)); err != nil {
			t.Fatalf("%+v: %v", m, err)
		} else if m.HugePages2Mi > 0 && !slicesEqual(p.Result.MemNodes, []int{1}) {
			t.Fatalf("huge pages placed on nodes %v, want [1]", p.Result.MemNodes)
		}
	}
}

// A pod whose memory fits only on two zones together is placed with its
// memory spilled over both, scored below a node that holds it on one.
func TestMemorySpillScoredBelowOneZone(t *testing.T) {
	small := memNode
	small.Name, small.MemoryPerNode = "small", 6*gib
	c := NewCluster()
	c.SetNRT("small", publishMem(t, small, "small", nil, nil))
	c.SetNRT("big", publishMem(t, memNode, "big", nil, nil))
	snap := c.Snapshot()
	r := memReq(2, cpualloc.Memory{Bytes: 7 * gib})
	spill, err := Place(snap.Get("small"), 0, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(spill.Result.NUMANodes) != 1 || !slicesEqual(spill.Result.MemNodes, []int{0, 1}) || spill.Locality != SeveralNUMA {
		t.Fatalf("on small: CPUs %s on %v, memory on %v, locality %d; want one node's CPUs, memory on [0 1]",
			spill.Result.CPUs, spill.Result.NUMANodes, spill.Result.MemNodes, spill.Locality)
	}
	one, err := Place(snap.Get("big"), 0, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Result.MemNodes) != 1 || !slicesEqual(one.Result.MemNodes, one.Result.NUMANodes) {
		t.Fatalf("on big: memory on %v, CPUs on %v; want one node", one.Result.MemNodes, one.Result.NUMANodes)
	}
	if one.Score <= spill.Score {
		t.Fatalf("one zone scores %d, the spill %d: want the one zone higher", one.Score, spill.Score)
	}
	if s, err := ScoreOf(snap.Get("small"), r); err != nil || s != spill.Score {
		t.Fatalf("ScoreOf = %d, %v; want the placement's %d", s, err, spill.Score)
	}
	// The same view asked for more memory does not answer from the
	// placement it remembers for less.
	if _, err := Place(snap.Get("small"), 0, memReq(2, cpualloc.Memory{Bytes: 13 * gib})); kind(err) != Insufficient {
		t.Fatalf("13Gi on 12Gi: %v", err)
	}
}

// The scheduler's own placements that the report does not show yet hold
// memory: assumed, then bound as assumed, and a decision found on a bound
// pod; released, it is free again.
func TestMemoryInCycleHoldings(t *testing.T) {
	c := NewCluster()
	c.SetNRT("n", publishMem(t, memNode, "n", nil, nil))
	six := memReq(2, cpualloc.Memory{Bytes: 6 * gib})
	a := mustPlace(t, c, "ns/a", "n", six)
	b := mustPlace(t, c, "ns/b", "n", six)
	if slicesEqual(a.Result.MemNodes, b.Result.MemNodes) || len(a.Result.MemNodes) != 1 || len(b.Result.MemNodes) != 1 {
		t.Fatalf("a's memory on %v, b's on %v: want one node each, not the same", a.Result.MemNodes, b.Result.MemNodes)
	}
	if _, err := place(t, c, "ns/c", "n", six); kind(err) != Insufficient {
		t.Fatalf("a third 6Gi pod on 2 x 8Gi: %v", err)
	}
	// Bound as assumed: still held.
	da := workload.Assignment{CPUs: a.Result.CPUs, Policy: a.Result.Policy}
	c.SetPodMemory("ns/a", "n", &da, six.Memory)
	if _, err := place(t, c, "ns/c", "n", six); kind(err) != Insufficient {
		t.Fatalf("after a is bound: %v", err)
	}
	c.DeletePod("ns/b")
	if _, err := place(t, c, "ns/c", "n", six); err != nil {
		t.Fatalf("after b is gone: %v", err)
	}

	// A restarted scheduler learns a bound pod's decision from the pod:
	// its memory is held on the nodes of its CPUs.
	c = NewCluster()
	c.SetNRT("n", publishMem(t, memNode, "n", nil, nil))
	node0 := workload.Assignment{CPUs: cpuset.New(1, 9), Policy: cpualloc.FullPCPUs}
	c.SetPodMemory("ns/d", "n", &node0, cpualloc.Memory{Bytes: 7 * gib})
	p := mustPlace(t, c, "ns/e", "n", six)
	if !slicesEqual(p.Result.MemNodes, []int{1}) {
		t.Fatalf("with 7Gi of node 0 held by a decision, 6Gi went to %v, want [1]", p.Result.MemNodes)
	}
}

// A report that counts no memory (an agent from before memory was
// counted) places a pod's CPUs as before, whatever memory it asks.
func TestMemoryNotCounted(t *testing.T) {
	o := publishMem(t, memNode, "n", nil, nil)
	for i := range o.Zones {
		o.Zones[i].Resources = o.Zones[i].Resources[:1] // cpu only
	}
	c := NewCluster()
	c.SetNRT("n", o)
	if err := c.ReportError("n"); err != nil {
		t.Fatal(err)
	}
	p, err := Place(c.Snapshot().Get("n"), 0, memReq(2, cpualloc.Memory{Bytes: 64 * gib, HugePages1Gi: gib}))
	if err != nil || !slicesEqual(p.Result.MemNodes, p.Result.NUMANodes) {
		t.Fatalf("Place = %+v, %v; want the CPUs placed, memory on their nodes", p.Result, err)
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHostileZoneMemory: a zone's memory and huge pages are a node's to
// write: a negative, absurd or impossible quantity, or more resources than
// a zone has, makes that node unusable with the zone, the resource and the
// field named, and the other nodes are served.
func TestHostileZoneMemory(t *testing.T) {
	edit := func(f func(z *nrt.Zone)) *nrt.Object {
		o := publishMem(t, memNode, "bad", nil, nil)
		f(&o.Zones[1])
		return o
	}
	set := func(name, field, value string) func(z *nrt.Zone) {
		return func(z *nrt.Zone) {
			for i := range z.Resources {
				if z.Resources[i].Name != name {
					continue
				}
				q := resourceQty(t, value)
				if field == "capacity" {
					z.Resources[i].Capacity = q
				} else {
					z.Resources[i].Available = q
				}
			}
		}
	}
	many := func(z *nrt.Zone) {
		for range maxZoneResources {
			z.Resources = append(z.Resources, nrt.Resource{Name: "example.com/thing"})
		}
	}
	for name, tc := range map[string]struct {
		edit func(z *nrt.Zone)
		want string
	}{
		"negative":       {set("memory", "available", "-1Gi"), `zone "node-1": memory available -1Gi is outside 0..1125899906842624 bytes`},
		"absurd":         {set("memory", "capacity", "2Pi"), `zone "node-1": memory capacity 2Pi is outside`},
		"huge pages":     {set(nrt.ResourceHugePages2Mi, "available", "9Ei"), `zone "node-1": hugepages-2Mi available`},
		"over capacity":  {set(nrt.ResourceHugePages2Mi, "available", "2Gi"), `zone "node-1": hugepages-2Mi available 2Gi is more than its capacity 1Gi`},
		"many resources": {many, `zone "node-1": 67 resources, more than 64`},
	} {
		t.Run(name, func(t *testing.T) {
			c := NewCluster()
			c.SetNRT("good", publishMem(t, memNode, "good", nil, nil))
			c.SetNRT("bad", edit(tc.edit))
			if err := c.ReportError("bad"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("bad node: %v, want an error containing %q", err, tc.want)
			}
			if _, err := Place(c.Snapshot().Get("good"), 0, memReq(2, cpualloc.Memory{Bytes: gib})); err != nil {
				t.Fatalf("good node: %v", err)
			}
		})
	}
}

func resourceQty(t *testing.T, s string) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
