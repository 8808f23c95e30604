package balancer

import (
	"math"
	"slices"
	"sort"

	"k8s.io/utils/cpuset"
)

// world is the decision's working copy of the machine: predicted load per
// partition and free memory per node, updated as groups are placed.
type world struct {
	cfg   Config
	parts []Partition
	index map[string]int
	load  []float64       // predicted CPUs per partition
	free  map[int]float64 // bytes a node can still take, margin kept
	dist  func(a, b int) int
	all   cpuset.CPUSet // every partition's CPUs
}

func newWorld(cfg Config, in Input) *world {
	w := &world{cfg: cfg, parts: in.Partitions, index: map[string]int{}, load: make([]float64, len(in.Partitions)),
		free: map[int]float64{}, dist: in.Distance, all: cpuset.New()}
	for i, p := range in.Partitions {
		w.index[p.Name] = i
		w.all = w.all.Union(p.CPUs)
	}
	for n, m := range in.Memory {
		w.free[n] = float64(m.Free) - float64(cfg.MemMargin)
	}
	return w
}

// capOf is how many of partition i's CPUs the group may use.
func (w *world) capOf(g *Group, i int) float64 {
	if g.Allowed.IsEmpty() {
		return w.parts[i].Capacity()
	}
	return float64(w.parts[i].CPUs.Intersection(g.Allowed).Size())
}

// shares splits load over a set of partitions in proportion to the CPUs the
// group may use in each.
func (w *world) shares(g *Group, set []int, load float64) []float64 {
	out := make([]float64, len(set))
	var total float64
	for _, i := range set {
		total += w.capOf(g, i)
	}
	for k, i := range set {
		if total > 0 {
			out[k] = load * w.capOf(g, i) / total
		}
	}
	return out
}

func (w *world) add(g *Group, set []int, load, sign float64) {
	for k, s := range w.shares(g, set, load) {
		w.load[set[k]] += sign * s
	}
}

// phi is the imbalance score: the sum over partitions of load²/capacity.
// It is least when every partition carries the same share of its CPUs,
// and moving load from a fuller to an emptier partition always lowers it,
// so a sequence of moves that each lower it cannot cycle.
func (w *world) phi() float64 {
	var s float64
	for i, l := range w.load {
		if c := w.parts[i].Capacity(); c > 0 {
			s += l * l / c
		}
	}
	return s
}

// deltaPhi is how much moving the group's load from one set to another
// changes phi (from may be nil: a first placement).
func (w *world) deltaPhi(g *Group, from, to []int, load float64) float64 {
	before := w.phi()
	w.add(g, from, load, -1)
	w.add(g, to, load, +1)
	after := w.phi()
	w.add(g, to, load, -1)
	w.add(g, from, load, +1)
	return after - before
}

// nodesOf is the memory nodes of a set of partitions, sorted.
func (w *world) nodesOf(set []int) []int {
	var out []int
	for _, i := range set {
		for _, n := range w.parts[i].Nodes {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	sort.Ints(out)
	return out
}

// remote is the group's memory, in bytes, on nodes outside the set's.
func (w *world) remote(g *Group, set []int) float64 {
	nodes := w.nodesOf(set)
	var r float64
	for n, b := range g.Mem {
		if !slices.Contains(nodes, n) {
			r += float64(b)
		}
	}
	return r
}

// memFits says whether the set's nodes have room for the group's memory
// that is elsewhere now. Nodes the input does not describe have room.
func (w *world) memFits(g *Group, set []int) bool {
	nodes := w.nodesOf(set)
	var room float64
	for _, n := range nodes {
		f, ok := w.free[n]
		if !ok {
			return true
		}
		room += max(f, 0)
	}
	return w.remote(g, set) <= room
}

// take charges the memory that will move to the set's nodes, evenly.
func (w *world) take(g *Group, set []int, sign float64) {
	nodes := w.nodesOf(set)
	r := w.remote(g, set) / float64(len(nodes))
	for _, n := range nodes {
		if _, ok := w.free[n]; ok {
			w.free[n] -= sign * r
		}
	}
}

const gib = float64(1 << 30)

// cost is what placing the group on a set adds: the rise of phi and the
// weighted memory it leaves remote.
func (w *world) cost(g *Group, from, to []int, load float64) float64 {
	return w.deltaPhi(g, from, to, load) + w.cfg.MemWeight*(w.remote(g, to)-w.remote(g, from))/gib
}

// eligible lists the partitions the group may use at all.
func (w *world) eligible(g *Group) []int {
	var out []int
	for i := range w.parts {
		if w.capOf(g, i) > 0 {
			out = append(out, i)
		}
	}
	return out
}

// partDistance is the distance between two partitions' first nodes.
func (w *world) partDistance(a, b int) int {
	na, nb := w.parts[a].Nodes, w.parts[b].Nodes
	if len(na) == 0 || len(nb) == 0 {
		return math.MaxInt32
	}
	if na[0] == nb[0] {
		return 0
	}
	if w.dist == nil {
		return 1
	}
	return w.dist(na[0], nb[0])
}

// candidates are the sets of k eligible partitions worth trying: each
// partition with its k-1 nearest others (ties: the less loaded), as numad
// grows a placement from a node outwards. Sorted by first member.
func (w *world) candidates(elig []int, k int) [][]int {
	var out [][]int
	seen := map[string]bool{}
	for _, a := range elig {
		rest := slices.Clone(elig)
		sort.SliceStable(rest, func(i, j int) bool {
			di, dj := w.partDistance(a, rest[i]), w.partDistance(a, rest[j])
			if di != dj {
				return di < dj
			}
			ui, uj := w.util(rest[i]), w.util(rest[j])
			if ui != uj {
				return ui < uj
			}
			return rest[i] < rest[j]
		})
		set := append([]int{a}, slices.DeleteFunc(rest, func(i int) bool { return i == a })[:k-1]...)
		sort.Ints(set)
		key := keyOf(set)
		if !seen[key] {
			seen[key] = true
			out = append(out, set)
		}
	}
	return out
}

func (w *world) util(i int) float64 {
	if c := w.parts[i].Capacity(); c > 0 {
		return w.load[i] / c
	}
	return math.Inf(1)
}

func keyOf(set []int) string {
	b := make([]byte, 0, 4*len(set))
	for _, i := range set {
		b = append(b, byte(i), byte(i>>8), byte(i>>16), ',')
	}
	return string(b)
}

// span is how many partitions the group needs for its CPUs: one unless its
// load exceeds the largest partition it may use.
func (w *world) span(g *Group, elig []int, load float64) int {
	var largest float64
	for _, i := range elig {
		largest = max(largest, w.capOf(g, i))
	}
	if largest <= 0 || load <= largest {
		return 1
	}
	return min(int(math.Ceil(load/largest-1e-9)), len(elig))
}
