package core

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// flat is what a view says, in a form two views can be compared by.
type flat struct {
	err              string
	reserved, excl   cpuset.CPUSet
	burst            map[int]int64
	holdings         int
	free, alloc      int64
	heartbeat        time.Time
	sharesEmptyMemos bool
}

func (f flat) String() string {
	return fmt.Sprintf("err %q reserved %s exclusive %s burst %v holdings %d free %d alloc %d heartbeat %s empty memo %t",
		f.err, f.reserved, f.excl, f.burst, f.holdings, f.free, f.alloc, f.heartbeat, f.sharesEmptyMemos)
}

func (f flat) equals(g flat) bool {
	return f.err == g.err && f.reserved.Equals(g.reserved) && f.excl.Equals(g.excl) && maps.Equal(f.burst, g.burst) &&
		f.holdings == g.holdings && f.free == g.free && f.alloc == g.alloc && f.heartbeat.Equal(g.heartbeat) &&
		f.sharesEmptyMemos == g.sharesEmptyMemos
}

func flatten(v *NodeView) flat {
	if v == nil {
		return flat{err: "no NodeResourceTopology named " + "?"}
	}
	if v.Err != nil {
		return flat{err: v.Err.Detail}
	}
	st := v.State()
	f := flat{reserved: v.Reserved, excl: st.Exclusive.CPUSet(), burst: map[int]int64{}, holdings: v.Holdings,
		free: v.freeMilli, alloc: v.allocMilli, heartbeat: v.Heartbeat}
	maps.Copy(f.burst, st.BurstMilli)
	f.sharesEmptyMemos = v.memo == v.machine.emptyMemo(v.Reserved)
	return f
}

// fromScratch is a node's view made the way it was before views were
// kept up to date: from every holding, anew.
func fromScratch(c *Cluster, node string) flat {
	r := c.reports[node]
	switch {
	case r == nil:
		return flat{err: "no NodeResourceTopology named " + node}
	case r.err != nil:
		return flat{err: r.err.Detail}
	}
	if cpus, ok := c.nodeCPUs[node]; ok && cpus > 0 && cpus != int64(len(r.machine.topo.CPUs)) {
		return flat{err: staleErr(len(r.machine.topo.CPUs), cpus).Detail}
	}
	var hs []workload.Assignment
	for key, h := range r.holdings {
		if p, ok := c.pods[key]; ok && p.node == node {
			hs = append(hs, h)
		}
	}
	for _, key := range c.byNode[node] {
		if p, ok := c.pods[key]; ok && p.node == node && p.decision != nil {
			if h, listed := r.holdings[key]; !listed || !p.decision.sameHolding(h) {
				hs = append(hs, p.decision.holding())
			}
		}
		if a, ok := c.assumed[key]; ok && a.node == node {
			hs = append(hs, a.a)
		}
	}
	st := cpualloc.State{BurstMilli: map[int]int64{}}
	for _, h := range hs {
		st = st.With(cpualloc.Result{CPUs: h.CPUs}, cpualloc.Request{CPUs: h.CPUs.Size(), Policy: h.Policy, RequestMilli: h.RequestMilli})
	}
	f := flat{reserved: r.reserved, excl: st.Exclusive.CPUSet(), burst: st.BurstMilli, holdings: len(hs), heartbeat: r.heartbeat,
		sharesEmptyMemos: len(hs) == 0}
	topo := r.machine.topo
	for _, cpu := range topo.CPUs {
		if r.reserved.Contains(cpu.ID) || topo.Isolated.Contains(cpu.ID) {
			continue
		}
		f.alloc += 1000
		if !st.Exclusive.Contains(cpu.ID) {
			f.free += max(0, 1000-st.BurstMilli[cpu.ID])
		}
	}
	return f
}

// TestTallyMatchesRebuild runs random sequences of reports, pods,
// assumed allocations and node changes, and after every step compares
// each node's view in the snapshot, kept up to date, with the view made
// from every holding anew.
func TestTallyMatchesRebuild(t *testing.T) {
	seeds, steps := 300, 150
	if testing.Short() {
		seeds = 40
	}
	nodes := []string{"n0", "n1", "n2"}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		c := NewCluster()
		var log []string
		for step := range steps {
			log = append(log, randomStep(t, rng, c, nodes))
			snap := c.Snapshot()
			c.mu.Lock()
			for _, node := range nodes {
				got, want := flatten(snap.Get(node)), fromScratch(c, node)
				if snap.Get(node) == nil {
					got.err = "no NodeResourceTopology named " + node
				}
				if !got.equals(want) {
					c.mu.Unlock()
					t.Fatalf("seed %d step %d, node %s:\nkept up to date %s\nfrom scratch    %s\nsteps:\n%v",
						seed, step, node, got, want, log)
				}
			}
			c.mu.Unlock()
		}
	}
}

var shapes = []fixture.Shape{twoNode, splitL3}

// randomCPUs is up to four CPU ids below n.
func randomCPUs(rng *rand.Rand, n int) cpuset.CPUSet {
	ids := make([]int, 1+rng.IntN(4))
	for i := range ids {
		ids[i] = rng.IntN(n)
	}
	return cpuset.New(ids...)
}

func randomHolding(rng *rand.Rand, n int) workload.Assignment {
	cpus := randomCPUs(rng, n)
	if rng.IntN(3) == 0 {
		return workload.Assignment{CPUs: cpus, Policy: cpualloc.StaticBurst, RequestMilli: int64(rng.IntN(3)) * 250 * int64(cpus.Size())}
	}
	return workload.Assignment{CPUs: cpus, Policy: []cpualloc.Policy{cpualloc.FullPCPUs, cpualloc.FullPCPUsThenThreads}[rng.IntN(2)]}
}

// randomStep makes one random change, and says which.
func randomStep(t *testing.T, rng *rand.Rand, c *Cluster, nodes []string) string {
	node := nodes[rng.IntN(len(nodes))]
	key := fmt.Sprintf("ns/p%d", rng.IntN(6))
	switch rng.IntN(10) {
	case 0:
		shape := shapes[rng.IntN(len(shapes))]
		held := map[string]workload.Assignment{}
		for range rng.IntN(4) {
			held[fmt.Sprintf("ns/p%d", rng.IntN(6))] = randomHolding(rng, shape.TotalCores()*shape.ThreadsPerCore)
		}
		reserved := []cpuset.CPUSet{cpuset.New(), reservedCore}[rng.IntN(2)]
		o := publish(t, shape, node, reserved, held)
		if rng.IntN(8) == 0 {
			delete(o.Metadata.Annotations, nrt.AnnotationCPUTopology)
		}
		c.SetNRT(node, o)
		return fmt.Sprintf("SetNRT(%s, %s, reserved %s, %v)", node, shape.Name, reserved, held)
	case 1:
		c.DeleteNRT(node)
		return fmt.Sprintf("DeleteNRT(%s)", node)
	case 2, 3:
		var d *workload.Assignment
		if rng.IntN(2) == 0 {
			h := randomHolding(rng, 40)
			d = &h
		}
		if rng.IntN(6) == 0 {
			node = ""
		}
		c.SetPod(key, node, d)
		return fmt.Sprintf("SetPod(%s, %s, %v)", key, node, d)
	case 4:
		c.DeletePod(key)
		return fmt.Sprintf("DeletePod(%s)", key)
	case 5, 6:
		h := randomHolding(rng, 40)
		seen := c.Snapshot().Get(node)
		if rng.IntN(4) == 0 {
			seen = nil // stale: placed again on the current view
		}
		r := Request{CPURequest: workload.CPURequest{CPUs: h.CPUs.Size(), Policy: h.Policy, RequestMilli: h.RequestMilli}}
		_, err := c.Assume(key, node, seen, Placement{Result: cpualloc.Result{CPUs: h.CPUs, Policy: h.Policy}}, r)
		return fmt.Sprintf("Assume(%s, %s, %v, seen %t): %v", key, node, h, seen != nil, err)
	case 7:
		if n, a, ok := c.Assumed(key); ok && rng.IntN(3) > 0 {
			c.SetPod(key, n, &a) // bound as assumed
			return fmt.Sprintf("SetPod(%s, %s, %v) as assumed", key, n, a)
		}
		c.Forget(key, node)
		return fmt.Sprintf("Forget(%s, %s)", key, node)
	case 8:
		cpus := []int64{0, 16, 32}[rng.IntN(3)]
		c.SetNodeCPUs(node, cpus)
		return fmt.Sprintf("SetNodeCPUs(%s, %d)", node, cpus)
	default:
		c.DeleteNode(node)
		return fmt.Sprintf("DeleteNode(%s)", node)
	}
}
