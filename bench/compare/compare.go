package compare

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"

	"github.com/locus-project/locus/bench/kubelet"
)

// Machine is a topology under a name: kubelet's test fixtures keep theirs,
// the project's fixture shapes theirs.
type Machine struct {
	Name     string
	Topology *topology.Topology
}

// Machines are kubelet's own test topologies followed by the project's
// fixture shapes.
func Machines() ([]Machine, error) {
	fs, err := kubelet.Fixtures()
	if err != nil {
		return nil, err
	}
	var out []Machine
	for _, f := range fs {
		out = append(out, Machine{Name: f.Name, Topology: f.Topology})
	}
	for _, s := range fixture.Shipped() {
		t, err := fixture.Build(s)
		if err != nil {
			return nil, err
		}
		out = append(out, Machine{Name: s.Name, Topology: t})
	}
	return out, nil
}

// Pair is a kubelet configuration and the Locus policy that serves the same
// requests.
type Pair struct {
	Name    string
	Kubelet kubelet.Config
	Locus   cpualloc.Policy
	// WholeOnly limits requests to multiples of the SMT width.
	WholeOnly bool
	// Spread pairs promise one thread per core first: an answer that
	// crowds fewer pairs of the request's threads onto one core (Pairs) is
	// better on that, whatever the five measures say.
	Spread bool
	// Even pairs promise an even split over the nodes a request spans: an
	// answer whose nodes' counts differ by more than one unit (a core when
	// the count is a multiple of the SMT width, else a CPU) does not serve.
	Even bool
}

// Pairs: kubelet's default static policy against Locus's default,
// full-pcpus-only against full-pcpus, and the two options that spread a
// request against the Locus policies that do: distribute-cpus-across-numa
// against distribute-across-numa, distribute-cpus-across-cores against
// spread-by-pcpus.
var Pairs = []Pair{
	{Name: "static / default"},
	{Name: "full-pcpus-only / full-pcpus", Kubelet: kubelet.Config{FullPCPUsOnly: true}, Locus: cpualloc.FullPCPUs, WholeOnly: true},
	{Name: "distribute-cpus-across-numa / distribute-across-numa", Kubelet: kubelet.Config{DistributeAcrossNUMA: true}, Locus: cpualloc.DistributeAcrossNUMA, Even: true},
	{Name: "distribute-cpus-across-cores / spread-by-pcpus", Kubelet: kubelet.Config{DistributeAcrossCores: true}, Locus: cpualloc.SpreadByPCPUs, Spread: true},
}

var (
	errNotWhole = errors.New("kubelet answered with parts of cores")
	errInvalid  = errors.New("kubelet answered with CPUs that are not free")
	errUneven   = errors.New("kubelet answered with an uneven split over NUMA nodes")
)

// Case is one request on one free set, answered by both.
type Case struct {
	Machine, Pair string
	Seed          uint64
	Taken         cpuset.CPUSet // CPUs other pods hold
	CPUs          int
	Kubelet       cpuset.CPUSet
	Locus         cpuset.CPUSet
	KubeletErr    error
	LocusErr      error
	K, L          Measures
	// Measure is the first measure that differs (-1: none, or one side
	// failed); Sign is -1 when Locus is better on it, 1 when worse.
	Measure, Sign int
	// Dominated is 1 when Locus is worse than kubelet on some measure and
	// better on none (or refused what kubelet served), -1 the other way
	// round, 0 when they are equal or each is better somewhere.
	Dominated int
}

func (c Case) String() string {
	return fmt.Sprintf("%s, %s, seed %d: %d CPUs with %s taken: kubelet %s (%s, err %v), locus %s (%s, err %v)",
		c.Machine, c.Pair, c.Seed, c.CPUs, c.Taken, c.Kubelet, c.K, c.KubeletErr, c.Locus, c.L, c.LocusErr)
}

// Run answers seeds random free sets of m, each with a few request sizes,
// with both sides of p.
func Run(m Machine, p Pair, seeds int) ([]Case, error) {
	alloc, err := cpualloc.NewAllocator(m.Topology)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	g := newGeometry(m.Topology)
	width := 1
	for _, cpus := range g.cores {
		width = max(width, len(cpus))
	}
	h := fnv.New64a()
	h.Write([]byte(m.Name))
	var out []Case
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		r := rand.New(rand.NewPCG(seed, h.Sum64()))
		taken := randomTaken(r, m.Topology, g)
		free := m.Topology.CPUSet().Difference(taken)
		k, err := kubelet.New(m.Topology, p.Kubelet)
		if err != nil {
			return nil, err
		}
		if err := k.Occupy(taken); err != nil {
			return nil, err
		}
		for i, n := range sizes(r, free.Size(), width, p.WholeOnly) {
			c := Case{Machine: m.Name, Pair: p.Name, Seed: seed, Taken: taken, CPUs: n, Measure: -1}
			c.Kubelet, c.KubeletErr = k.Allocate(i, n)
			if c.KubeletErr == nil {
				if err := k.Release(i); err != nil {
					return nil, err
				}
			}
			res, lerr := alloc.Allocate(cpualloc.State{Exclusive: cpualloc.BitsOf(taken)}, cpuset.New(), cpualloc.Request{CPUs: n, Policy: p.Locus})
			c.Locus, c.LocusErr = res.CPUs, lerr
			c.K, c.L = g.measure(c.Kubelet, free), g.measure(c.Locus, free)
			if c.KubeletErr == nil && (c.Kubelet.Size() != n || !c.Kubelet.IsSubsetOf(free)) {
				// kubelet v1.33 on a hybrid machine counts a two-thread core
				// with one thread free as a free core (its CPUs per core is
				// total CPUs / cores, 1 there) and hands out the sibling
				// another pod holds; that answer serves nobody.
				c.KubeletErr = errInvalid
			}
			if c.LocusErr == nil && (c.Locus.Size() != n || !c.Locus.IsSubsetOf(free)) {
				return nil, fmt.Errorf("%s: locus answered %s for %d CPUs from free %s", m.Name, c.Locus, n, free)
			}
			if p.WholeOnly && c.KubeletErr == nil && c.K.Shared+c.K.Broken > 0 {
				// kubelet's full-pcpus-only checks the count only and then
				// hands out parts of cores when whole ones run short; Locus's
				// full-pcpus refuses instead, as its contract says.
				c.KubeletErr = errNotWhole
			}
			if p.Even && c.KubeletErr == nil && !g.even(c.Kubelet, n, width) {
				// kubelet's distribute-cpus-across-numa falls back to packing
				// when no even split fits; Locus's distribute-across-numa
				// refuses instead, as its contract says.
				c.KubeletErr = errUneven
			}
			switch {
			case c.KubeletErr == nil && c.LocusErr != nil:
				c.Sign, c.Dominated = 1, 1
			case c.KubeletErr != nil && c.LocusErr == nil:
				c.Sign, c.Dominated = -1, -1
			case c.KubeletErr == nil:
				c.Measure, c.Sign = Compare(c.L, c.K)
				c.Dominated = Pareto(c.L, c.K)
				if p.Spread && c.Dominated == 1 && c.L.Pairs < c.K.Pairs {
					// kubelet crowded more of the request's threads onto
					// shared cores than Locus: a trade, not a loss.
					c.Dominated = 0
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// randomTaken occupies each NUMA node to a level of its own (empty, a
// quarter ... full), core by core: mostly whole cores, some single threads,
// so both whole free cores and left-over threads occur.
func randomTaken(r *rand.Rand, t *topology.Topology, g geometry) cpuset.CPUSet {
	levels := []float64{0, 0.25, 0.5, 0.75, 0.9, 1}
	level := map[int]float64{}
	for _, n := range t.Nodes {
		level[n.ID] = levels[r.IntN(len(levels))]
	}
	ids := make([]int, 0, len(g.cores))
	for core := range g.cores {
		ids = append(ids, core)
	}
	slices.Sort(ids)
	var taken []int
	for _, core := range ids {
		cpus := g.cores[core]
		if r.Float64() >= level[g.cpu[cpus[0]].NUMA] {
			continue
		}
		if len(cpus) > 1 && r.IntN(10) < 3 {
			taken = append(taken, cpus[r.IntN(len(cpus))])
		} else {
			taken = append(taken, cpus...)
		}
	}
	return cpuset.New(taken...)
}

// sizes are small counts, where placement inside a node matters, and random
// ones up to every free CPU, where spanning nodes and sockets does.
func sizes(r *rand.Rand, free, width int, wholeOnly bool) []int {
	var out []int
	for _, n := range []int{1, 2, 3, 4, 6, 8, 1 + r.IntN(max(1, free)), 1 + r.IntN(max(1, free)), 1 + r.IntN(max(1, free/2))} {
		if wholeOnly {
			n = (n + width - 1) / width * width
		}
		if n <= free && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
