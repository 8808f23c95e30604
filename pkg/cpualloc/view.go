package cpualloc

import (
	"fmt"

	"k8s.io/utils/cpuset"
)

// maxBurstMilli is one CPU's worth of requests: static-burst pods may share a
// CPU while their per-CPU shares sum to at most this.
const maxBurstMilli = 1000

// view is one decision's picture of the machine: which CPUs the request may
// take, and how much every core, L3 group and node offers under its policy.
// Views are pooled per index: a decision allocates almost nothing.
type view struct {
	ix  *index
	req Request // normalised: policy and strategy set
	n   int
	// usable holds the CPUs this request may receive; taken those it never
	// may (exclusively owned, or reserved/isolated unless allowed).
	usable, taken bitset
	// load is the burst load per CPU id; loaded says it may hold any.
	load   []int64
	loaded bool
	share  int64 // static-burst: millicores this request adds to each CPU
	// free[c] counts core c's usable threads; whole[c] says core c is a whole
	// physical core (full SMT width) that is entirely free for exclusive use.
	free  []int
	whole []bool
	// cap is the policy's capacity per core, aux and pref the counts its
	// grade looks at (see policy.go); all summed per L3 group and node.
	cap, aux, pref measure
	// uneven lets distribute-across-numa split a request in CPUs within a
	// core of even, once no split in whole cores fits (see rebalance).
	uneven bool
	// side is static-burst's count of free threads beside burst load,
	// coreLoad its burst load per core and stack that load summed per domain.
	side, stack measure
	coreLoad    []int64
	// spanWhole says the fill takes whole cores first and aux counts their
	// CPUs: sockets and L3 groups spanned are counted in aux, not cap.
	spanWhole bool
	// shareBuf is scratch for distribute-across-numa's per-node shares.
	shareBuf []visit
	// burstBuf is scratch for static-burst's CPU classes: fragments, threads
	// of whole free cores, threads beside burst load, CPUs with burst load.
	burstBuf [4][]int
	// mem, when set, is the memory the request needs and each node has
	// free: search admits only domains whose nodes hold it.
	mem *memFit
}

func (ix *index) allocView() *view {
	return &view{
		ix: ix, usable: newBitset(ix.words), taken: newBitset(ix.words),
		load: make([]int64, ix.words*64), free: make([]int, len(ix.cores)), whole: make([]bool, len(ix.cores)),
		coreLoad: make([]int64, len(ix.cores)),
		cap:      ix.newMeasure(), aux: ix.newMeasure(), pref: ix.newMeasure(), side: ix.newMeasure(), stack: ix.newMeasure(),
	}
}

// measure is a per-core count with its sums per L3 group, cell and node.
type measure struct{ core, l3, cell, node []int }

func (ix *index) newMeasure() measure {
	return measure{core: make([]int, len(ix.cores)), l3: make([]int, len(ix.l3s)),
		cell: make([]int, len(ix.cells)), node: make([]int, len(ix.nodes))}
}

// sum fills m's L3, cell and node sums from its per-core counts.
func (ix *index) sum(m measure) {
	clear(m.l3)
	clear(m.node)
	for ci, n := range m.core {
		m.l3[ix.cores[ci].l3] += n
	}
	for li, n := range m.l3 {
		m.node[ix.l3s[li].node] += n
	}
	clear(m.cell)
	for li, n := range m.l3 {
		m.cell[ix.l3s[li].cell] += n
	}
}

// domain is where a request is placed: one L3 group, or one or more nodes.
type domain struct {
	l3    int   // L3 group index, or -1
	nodes []int // node indices, ascending, when l3 < 0
}

func (m measure) of(d domain) int {
	if d.l3 >= 0 {
		return m.l3[d.l3]
	}
	sum := 0
	for _, n := range d.nodes {
		sum += m.node[n]
	}
	return sum
}

func (ix *index) newView(st occupancy, reserved cpuset.CPUSet, req Request) (*view, error) {
	v := ix.views.Get().(*view)
	v.req, v.n, v.share, v.mem, v.spanWhole = req, req.CPUs, 0, st.mem, false
	if req.Policy == StaticBurst {
		v.share = BurstShare(req.requestMilli(), req.CPUs)
	}
	clear(v.taken)
	clear(v.usable)
	v.taken.addBits(st.bits)
	if st.outside != nil {
		v.taken.addBits(st.outside)
	}
	if !req.UseReserved {
		v.taken.addSet(reserved, ix.online)
		v.taken.addBits(ix.isolated)
	}
	if err := v.readLoads(st.burst); err != nil {
		ix.views.Put(v)
		return nil, err
	}
	burst := req.Policy == StaticBurst
	for ci, c := range ix.cores {
		exclusive, free := 0, 0
		for _, id := range c.cpus {
			if v.taken.has(id) {
				continue
			}
			load := v.load[id]
			if load == 0 {
				exclusive++
			}
			if burst && load+v.share <= maxBurstMilli || !burst && load == 0 {
				v.usable.set(id)
				free++
			}
		}
		v.free[ci] = free
		v.whole[ci] = exclusive == len(c.cpus) && ix.wholeCore(ci)
	}
	return v, nil
}

// readLoads copies the burst load of every online CPU into v.load, ranging
// over small maps and probing big ones (see iterationCost).
func (v *view) readLoads(loads map[int]int64) error {
	// Most states carry no burst load: then only a view that last saw some
	// has anything to clear.
	if v.loaded {
		clear(v.load)
		v.loaded = false
	}
	if len(loads) == 0 {
		return nil
	}
	v.loaded = true
	online := v.ix.online
	if len(loads)*iterationCost < len(online) {
		for id, m := range loads {
			if id >= 0 && id < len(v.load) && v.ix.cpuCore[id] >= 0 {
				v.load[id] = m
			}
		}
	} else {
		for _, id := range online {
			v.load[id] = loads[id]
		}
	}
	for _, id := range online {
		if v.load[id] < 0 {
			return fmt.Errorf("state: cpu %d has negative burst load %d", id, v.load[id])
		}
	}
	return nil
}

// usableTotal counts every CPU the request may receive, for error messages.
func (v *view) usableTotal() int {
	sum := 0
	for _, n := range v.free {
		sum += n
	}
	return sum
}

func (v *view) wholeTotal() int {
	sum := 0
	for _, w := range v.whole {
		if w {
			sum++
		}
	}
	return sum
}

// wholeCPUs counts the CPUs of whole free cores.
func (v *view) wholeCPUs() int {
	sum := 0
	for c, w := range v.whole {
		if w {
			sum += len(v.ix.cores[c].cpus)
		}
	}
	return sum
}
