package cpualloc

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// scenario is a random occupancy and request on one topology.
type scenario struct {
	topo     *topology.Topology
	st       State
	reserved cpuset.CPUSet
	req      Request
}

// randomScenario takes roughly busy (0..1) of the machine: whole cores and
// single threads exclusively, and some burst load on the rest.
func randomScenario(r *rand.Rand, topo *topology.Topology, busy float64) scenario {
	cores := coresOf(topo)
	var excl []int
	burst := map[int]int64{}
	for _, cpus := range cores {
		switch p := r.Float64(); {
		case p < busy*0.6:
			excl = append(excl, cpus...)
		case p < busy:
			excl = append(excl, cpus[r.IntN(len(cpus))])
		case p < busy+0.1:
			burst[cpus[r.IntN(len(cpus))]] = 1 + r.Int64N(1000)
		}
	}
	var reserved []int
	for range r.IntN(3) {
		reserved = append(reserved, topo.CPUs[r.IntN(len(topo.CPUs))].ID)
	}
	policies := []Policy{FullPCPUs, SpreadByPCPUs, DistributeAcrossNUMA, StaticBurst, ""}
	req := Request{Policy: policies[r.IntN(len(policies))], UseReserved: r.IntN(10) == 0}
	if r.IntN(2) == 0 {
		req.NUMAStrategy = LeastAllocated
	}
	if r.IntN(4) == 0 {
		req.CPUs = 1 + r.IntN(len(topo.CPUs))
	} else {
		req.CPUs = 1 + r.IntN(16)
	}
	// full-pcpus: mostly whole-core counts, sometimes an odd one; the
	// default: both as often, since odd counts take its other rule.
	if req.Policy == FullPCPUs && r.IntN(8) != 0 || req.Policy == "" && r.IntN(2) == 0 {
		req.CPUs += req.CPUs % smtWidth(cores)
	}
	if req.Policy == StaticBurst {
		req.RequestMilli = r.Int64N(int64(req.CPUs)*1000 + 1)
	}
	return scenario{topo, State{Exclusive: NewBits(excl...), BurstMilli: burst}, cpuset.New(reserved...), req}
}

// coresOf groups online CPU ids by core, straight from the topology.
func coresOf(topo *topology.Topology) map[int][]int {
	out := map[int][]int{}
	for _, c := range topo.CPUs {
		out[c.Core] = append(out[c.Core], c.ID)
	}
	return out
}

func smtWidth(cores map[int][]int) int {
	w := 0
	for _, cpus := range cores {
		w = max(w, len(cpus))
	}
	return w
}

// oracle recomputes, without the allocator's code, which CPUs the request may
// use, and how many per node in the policy's own terms.
type oracle struct {
	usable   map[int]bool // per CPU id
	whole    map[int]bool // per core id: every thread free for exclusive use
	capacity map[int]int  // per node id
	share    int64
	// policy is the rule the allocator must have applied: the default is
	// full-pcpus for multiples of the SMT width.
	policy Policy
	width  int
	// full-pcpus-then-threads: the CPUs it aims to take as whole cores, and
	// the remainder.
	bulk, rest int
}

// newOracle works out which rule the allocator must apply: the default takes
// whole cores for multiples of the SMT width unless threads of fewer nodes
// would serve (or whole cores would not serve at all).
func newOracle(sc scenario) oracle {
	req, _ := sc.req.normalised()
	applied := req.Policy
	if applied == FullPCPUsThenThreads && req.CPUs%smtWidth(coresOf(sc.topo)) == 0 {
		ws, wn := oracleAs(sc, FullPCPUs).bestSpan(sc.topo, req.CPUs)
		ts, tn := oracleAs(sc, FullPCPUsThenThreads).bestSpan(sc.topo, req.CPUs)
		applied = FullPCPUsThenThreads
		if wn > 0 && (ws < ts || ws == ts && wn <= tn) {
			applied = FullPCPUs
		}
	}
	return oracleAs(sc, applied)
}

// oracleAs recomputes usable CPUs and capacities for one applied rule.
func oracleAs(sc scenario, applied Policy) oracle {
	req, _ := sc.req.normalised()
	o := oracle{usable: map[int]bool{}, whole: map[int]bool{}, capacity: map[int]int{}}
	if req.Policy == StaticBurst {
		o.share = BurstShare(req.requestMilli(), req.CPUs)
	}
	blocked := func(id int) bool {
		return sc.st.Exclusive.Contains(id) ||
			!req.UseReserved && (sc.reserved.Contains(id) || sc.topo.Isolated.Contains(id))
	}
	cores := coresOf(sc.topo)
	o.width = smtWidth(cores)
	o.policy = applied
	o.rest = req.CPUs % o.width
	o.bulk = req.CPUs - o.rest
	// With no CPU offline (ids without a gap) a short core is a hybrid
	// part's single-thread core, and whole.
	dense := sc.topo.CPUs[len(sc.topo.CPUs)-1].ID == len(sc.topo.CPUs)-1
	for core, cpus := range cores {
		o.whole[core] = len(cpus) == o.width || dense
		for _, id := range cpus {
			load := sc.st.BurstMilli[id]
			if blocked(id) || load > 0 {
				o.whole[core] = false
			}
			if req.Policy == StaticBurst {
				o.usable[id] = !blocked(id) && load+o.share <= 1000
			} else {
				o.usable[id] = !blocked(id) && load == 0
			}
		}
	}
	for _, c := range sc.topo.CPUs {
		if o.policy == FullPCPUs && o.whole[c.Core] || o.policy != FullPCPUs && o.usable[c.ID] {
			o.capacity[c.NUMA]++
		}
	}
	return o
}

// isLeftover says whether a core (its id and CPU ids) is not whole but can
// give the remainder of a full-pcpus-then-threads request.
func (o oracle) isLeftover(core int, cpus []int) bool {
	free := 0
	for _, id := range cpus {
		if o.usable[id] {
			free++
		}
	}
	return !o.whole[core] && free >= o.rest
}

// minNodes is the fewest nodes whose capacity adds up to n, or 0 if all of
// them together cannot.
func (o oracle) minNodes(n int) int {
	var caps []int
	for _, c := range o.capacity {
		caps = append(caps, c)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(caps)))
	sum := 0
	for i, c := range caps {
		if sum += c; sum >= n {
			return i + 1
		}
	}
	return 0
}

// checkScenario runs the allocator on sc and fails t on any broken invariant.
func checkScenario(t testing.TB, sc scenario) {
	t.Helper()
	res, err := Allocate(sc.topo, sc.st, sc.reserved, sc.req)
	again, err2 := Allocate(sc.topo, reshuffled(sc.st), sc.reserved, sc.req)
	if (err == nil) != (err2 == nil) || err == nil && (!res.CPUs.Equals(again.CPUs) || !slices.Equal(res.NUMANodes, again.NUMANodes)) {
		t.Fatalf("not deterministic: %v %v / %v %v for %+v", res.CPUs, err, again.CPUs, err2, sc.req)
	}
	req, _ := sc.req.normalised()
	o := newOracle(sc)
	lower := o.minNodes(req.CPUs)
	if err != nil {
		if !errors.Is(err, ErrInsufficient) && !errors.Is(err, ErrInvalidRequest) {
			t.Fatalf("error %v is neither ErrInsufficient nor ErrInvalidRequest", err)
		}
		odd := req.Policy == FullPCPUs && req.CPUs%smtWidth(coresOf(sc.topo)) != 0
		// static-burst never spans nodes: it must succeed when one node can hold it.
		if lower > 0 && req.Policy != DistributeAcrossNUMA && !odd && (req.Policy != StaticBurst || lower == 1) {
			t.Fatalf("%v although %d node(s) have room for %+v", err, lower, req)
		}
		return
	}
	checkResult(t, sc, req, o, res, lower)
	// Result.Policy names the rule applied: asking for it gives the same CPUs.
	named := sc.req
	named.Policy = res.Policy
	if same, err := Allocate(sc.topo, sc.st, sc.reserved, named); err != nil || !same.CPUs.Equals(res.CPUs) {
		t.Fatalf("policy %q gives %s (%v), the request %+v gave %s", res.Policy, same.CPUs, err, sc.req, res.CPUs)
	}
}

func checkResult(t testing.TB, sc scenario, req Request, o oracle, res Result, lower int) {
	t.Helper()
	ids := res.CPUs.List()
	if len(ids) != req.CPUs {
		t.Fatalf("got %d CPUs (%s), want %d", len(ids), res.CPUs, req.CPUs)
	}
	for _, id := range ids {
		if !o.usable[id] {
			t.Fatalf("cpu %d in %s is taken, reserved, isolated, offline or without room (%+v)", id, res.CPUs, req)
		}
	}
	if nodes := sc.topo.NodesOf(res.CPUs); !slices.Equal(nodes, res.NUMANodes) {
		t.Fatalf("NUMANodes %v, but the CPUs span %v", res.NUMANodes, nodes)
	}
	if res.Policy != o.policy {
		t.Fatalf("result says policy %q, want %q (%+v)", res.Policy, o.policy, req)
	}
	cores := coresOf(sc.topo)
	if o.policy == FullPCPUs {
		for _, id := range ids {
			c, _ := sc.topo.CPU(id)
			if !cpuset.New(cores[c.Core]...).IsSubsetOf(res.CPUs) {
				t.Fatalf("full-pcpus result %s has part of core %d", res.CPUs, c.Core)
			}
		}
	}
	span := len(res.NUMANodes)
	// Sockets rank before nodes: more nodes than the fewest are right only
	// when every set of the fewest nodes that fits touches more sockets.
	fewerSockets := span > lower && socketsOf(sc.topo, res.NUMANodes) < o.minSockets(sc.topo, lower, req.CPUs)
	if req.Policy == DistributeAcrossNUMA && (span < lower || lower == 1 && span != 1) ||
		req.Policy != DistributeAcrossNUMA && span != lower && !fewerSockets {
		t.Fatalf("%s spans %d nodes %v, fewest possible %d (%+v)", res.CPUs, span, res.NUMANodes, lower, req)
	}
	if req.Policy == SpreadByPCPUs && sharesCore(sc.topo, res.CPUs) &&
		coresWithUsable(sc.topo, o, res.NUMANodes) >= req.CPUs {
		t.Fatalf("spread result %s doubles up a core while its nodes have %d cores with room",
			res.CPUs, coresWithUsable(sc.topo, o, res.NUMANodes))
	}
	if req.Policy == SpreadByPCPUs {
		checkSpreadFragments(t, sc, o, res)
	}
	if req.Policy == StaticBurst {
		after := sc.st.With(res, req)
		for id, m := range after.BurstMilli {
			if m > 1000 {
				t.Fatalf("cpu %d burst load %d > 1000 after %s", id, m, res.CPUs)
			}
		}
		checkBurstClasses(t, sc, o, res)
	}
	if o.policy == FullPCPUsThenThreads {
		checkThenThreads(t, sc, o, res)
	}
}
