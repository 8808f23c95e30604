package cpualloc

import (
	"fmt"
	"sync"

	"github.com/locus-project/locus/pkg/topology"
)

// index is everything about a topology that does not change between
// decisions, laid out as dense slices so a decision touches no maps.
//
// Cores and L3 groups are numbered in order of their lowest CPU id, so "lowest
// id" tie-breaks mean "lowest CPU id" for them and node id for nodes.
type index struct {
	words   int // bitset length covering the highest online CPU id
	threads int // SMT width: the most online threads any core has
	cores   []core
	l3s     []cache
	cells   []cell
	nodes   []numa // nodes that have CPUs, by id; memory-only nodes never hold CPUs
	// shortWhole is true when a core with fewer threads than the SMT width
	// is a whole core (see wholeCore).
	shortWhole bool
	// uniform is true when every core has the SMT width's threads.
	uniform bool
	online  []int // online CPU ids, ascending
	// cpuCore maps a CPU id to its core index, -1 when the CPU is offline.
	cpuCore  []int32
	isolated bitset
	// single[n] is the one-element node list of node n, so a single-node
	// domain needs no allocation.
	single [][]int
	// combos[k] lists k-node sets (k >= 2), best located first; see combos.go.
	combos [][]combo
	// exhaustive is true when combos holds every node subset.
	exhaustive bool
	// spill[k] is combos[k] in the order memory spills over node sets:
	// least summed distance first (see memalloc.go).
	spill [][]combo
	// topoNodes is the sorted ids of every node of the topology, CPU-less
	// ones too: the ids State.Free may name.
	topoNodes []int
	distance  [][]int // SLIT distance between node indices
	// nodeDistance[p][n] is the SLIT distance from topoNodes[p] to CPU node
	// index n: how far a device's node is from each node's CPUs.
	nodeDistance [][]int
	// nodesPerSocket is the most CPU nodes any socket holds (at least 1).
	nodesPerSocket int
	views          sync.Pool
}

type core struct {
	cpus []int // online thread ids, ascending
	l3   int   // index into index.l3s
	node int   // index into index.nodes
}

// cache is the part of one L3 that lies in one cell. Keying L3 groups by
// (node, socket, L3) keeps every L3 domain inside a node and a socket even
// when a cache spans nodes (sub-NUMA clustering) or a node spans sockets,
// and turns "no L3 reported" into one group per cell.
type cache struct {
	id    int // the topology's L3 id, -1 when none
	node  int
	cell  int
	cores []int
}

// cell is the part of one NUMA node that lies in one socket: the node itself
// where sockets hold whole nodes, one socket where a node spans several. The
// domains nest L3 group ⊆ cell ⊆ node whatever the machine's nesting of
// nodes and sockets.
type cell struct {
	node, socket int
	l3s          []int
}

type numa struct {
	id      int
	sockets []int
	cells   []int
	l3s     []int
	cores   []int
}

func buildIndex(t *topology.Topology) (*index, error) {
	if t == nil {
		return nil, fmt.Errorf("topology is nil")
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	ix := &index{words: t.CPUs[len(t.CPUs)-1].ID/64 + 1}
	ix.cpuCore = make([]int32, ix.words*64)
	for i := range ix.cpuCore {
		ix.cpuCore[i] = -1
	}
	nodeIdx := map[int]int{}
	for _, n := range t.Nodes {
		if !n.CPUs.IsEmpty() {
			nodeIdx[n.ID] = len(ix.nodes)
			ix.nodes = append(ix.nodes, numa{id: n.ID})
			ix.single = append(ix.single, []int{len(ix.single)})
		}
	}
	coreIdx, l3Idx, cellIdx := map[int]int{}, map[[3]int]int{}, map[[2]int]int{}
	for _, c := range t.CPUs {
		ni := nodeIdx[c.NUMA]
		ci, seen := coreIdx[c.Core]
		if !seen {
			xi, ok := cellIdx[[2]int{c.NUMA, c.Socket}]
			if !ok {
				xi = len(ix.cells)
				cellIdx[[2]int{c.NUMA, c.Socket}] = xi
				ix.cells = append(ix.cells, cell{node: ni, socket: c.Socket})
				ix.nodes[ni].cells = append(ix.nodes[ni].cells, xi)
			}
			li, ok := l3Idx[[3]int{c.NUMA, c.Socket, c.L3}]
			if !ok {
				li = len(ix.l3s)
				l3Idx[[3]int{c.NUMA, c.Socket, c.L3}] = li
				ix.l3s = append(ix.l3s, cache{id: c.L3, node: ni, cell: xi})
				ix.nodes[ni].l3s = append(ix.nodes[ni].l3s, li)
				ix.cells[xi].l3s = append(ix.cells[xi].l3s, li)
			}
			ci = len(ix.cores)
			coreIdx[c.Core] = ci
			ix.cores = append(ix.cores, core{l3: li, node: ni})
			ix.l3s[li].cores = append(ix.l3s[li].cores, ci)
			ix.nodes[ni].cores = append(ix.nodes[ni].cores, ci)
		}
		k := &ix.cores[ci]
		if k.node != ni || ix.l3s[k.l3].id != c.L3 || ix.cells[ix.l3s[k.l3].cell].socket != c.Socket {
			return nil, fmt.Errorf("topology: core %d has threads in different numa nodes, sockets or L3 caches (cpu %d)", c.Core, c.ID)
		}
		k.cpus = append(k.cpus, c.ID)
		ix.threads = max(ix.threads, len(k.cpus))
		ix.cpuCore[c.ID] = int32(ci)
		ix.online = append(ix.online, c.ID)
		ix.nodes[ni].addSocket(c.Socket)
	}
	// Online CPU ids without a gap mean no CPU is offline (Linux numbers
	// CPUs densely from 0), so a core with fewer threads than the widest is
	// single-threaded by design (a hybrid part's efficiency core), not a core
	// whose sibling was taken offline.
	ix.shortWhole = len(ix.online) == ix.online[len(ix.online)-1]+1
	ix.uniform = ix.allUniform()
	ix.isolated = newBitset(ix.words)
	ix.isolated.addSet(t.Isolated, ix.online)
	ix.distance = make([][]int, len(ix.nodes))
	for i, a := range ix.nodes {
		ix.distance[i] = make([]int, len(ix.nodes))
		for j, b := range ix.nodes {
			ix.distance[i][j] = t.Distance(a.id, b.id)
		}
	}
	perSocket := map[int]int{}
	ix.nodesPerSocket = 1
	for _, n := range ix.nodes {
		for _, s := range n.sockets {
			perSocket[s]++
			ix.nodesPerSocket = max(ix.nodesPerSocket, perSocket[s])
		}
	}
	ix.combos, ix.exhaustive = buildCombos(ix)
	ix.spill = buildSpill(ix.combos)
	for _, n := range t.Nodes {
		ix.topoNodes = append(ix.topoNodes, n.ID)
	}
	ix.nodeDistance = ix.nodeDistances(t.Distance)
	ix.views.New = func() any { return ix.allocView() }
	return ix, nil
}

func (n *numa) addSocket(s int) {
	for _, have := range n.sockets {
		if have == s {
			return
		}
	}
	n.sockets = append(n.sockets, s)
}

// wholeCore reports whether core c has all its threads online: every thread
// of the machine's SMT width, or, on a machine with no CPU offline, however
// many it has (a hybrid part's single-thread cores are whole cores). A core
// whose sibling is offline is a fragment, never a full-pcpus core: its
// sibling may come back and be handed to someone else.
func (ix *index) wholeCore(c int) bool {
	return len(ix.cores[c].cpus) == ix.threads || ix.shortWhole
}

func (ix *index) allUniform() bool {
	for _, c := range ix.cores {
		if len(c.cpus) != ix.threads {
			return false
		}
	}
	return true
}
