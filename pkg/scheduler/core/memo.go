package core

import (
	"slices"
	"sync"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

// memoSize is how many placements a view remembers: distinct requests are
// few (counts and policies; the strategies are the scheduler's).
const memoSize = 16

// memo is a view's remembered placements: for each request its score, or
// why it does not fit. A view never changes, and from one scheduling cycle
// to the next every node but the one or two that changed keeps its view,
// so a pod asking what an earlier pod asked costs a scan of a few words
// per node instead of an allocation. The keys sit in the view itself:
// Filter asks every node, and a lookup that touches one more cache line per
// node shows at a thousand nodes. The placements themselves are not kept:
// each held a CPU set, its nodes and its memory by node (about 1 KB),
// sixteen a view on a packed cluster, and only the chosen node's is read,
// once a cycle (Reserve), where placing it again costs what one Filter of
// one node cost before the memo.
type memo struct {
	mu     sync.Mutex
	keys   [memoSize]uint64 // memoKey; 0 is an empty slot
	scores [memoSize]int64  // the placements' scores
	failed uint16           // the slots whose request does not fit
	next   int              // the slot to fill next, round robin
	// errs are why the failed slots' requests do not fit: made for the
	// first of them only.
	errs *[memoSize]error
	// mems are the memories of the requests whose key says they have
	// some (memoMemory), each once; memOf is, by slot, which. Pods ask
	// few distinct memories, and an array of sixteen by slot was larger
	// than the rest of the memo (384 bytes, one memo a node).
	mems  []cpualloc.Memory
	memOf [memoSize]uint8
}

// memAt is the memory of slot i, whose key has memoMemory.
func (m *memo) memAt(i int) cpualloc.Memory { return m.mems[m.memOf[i]] }

// keepMem records mem as slot i's memory, dropping first the memories no
// other slot of a memory request names when every one is taken.
func (m *memo) keepMem(i int, mem cpualloc.Memory) {
	if j := slices.Index(m.mems, mem); j >= 0 {
		m.memOf[i] = uint8(j)
		return
	}
	if len(m.mems) == memoSize {
		var kept []cpualloc.Memory
		for s, k := range m.keys {
			if s == i || k&memoMemory == 0 {
				continue
			}
			j := slices.Index(kept, m.memAt(s))
			if j < 0 {
				j, kept = len(kept), append(kept, m.memAt(s))
			}
			m.memOf[s] = uint8(j)
		}
		m.mems = kept
	}
	m.memOf[i], m.mems = uint8(len(m.mems)), append(m.mems, mem)
}

// get finds key: its placement's score, or why it does not fit.
func (m *memo) get(key uint64, mem cpualloc.Memory) (score int64, ok bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, k := range m.keys {
		if k != key || (key&memoMemory != 0 && m.memAt(i) != mem) {
			continue
		}
		if m.failed&(1<<i) != 0 {
			err = m.errs[i]
		}
		return m.scores[i], true, err
	}
	return 0, false, nil
}

func (m *memo) put(key uint64, mem cpualloc.Memory, score int64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.next
	m.keys[i], m.scores[i] = key, score
	if key&memoMemory != 0 {
		m.keepMem(i, mem)
	}
	m.failed &^= 1 << i
	if err != nil {
		if m.errs == nil {
			m.errs = new([memoSize]error)
		}
		m.errs[i] = err
		m.failed |= 1 << i
	} else if m.errs != nil {
		m.errs[i] = nil
	}
	m.next = (i + 1) % memoSize
}

// memoMemory marks the key of a request with memory: its memory, which
// does not fit in the word, lies beside the placement and is compared
// only where the key matches, so that requests without memory (most)
// pay nothing for it.
const memoMemory = 1 << 62

// memoKey packs a request into a word: CPUs in bits 0-15, the policy in
// 16-18, the NUMA strategy in 19-20, the scoring in 21-22, the request in
// millicores from bit 23 (below 2^40), bit 62 (memoMemory) when it asks
// for memory, and bit 63 set. A request with a value that does not fit
// has none (ok false) and is placed every time, as is one holding devices
// (their nodes are each view's own).
func (r Request) memoKey() (key uint64, ok bool) {
	if !r.Devices.Empty() {
		return 0, false
	}
	var pol, numa, score uint64
	switch r.Policy {
	case "":
	case cpualloc.FullPCPUs:
		pol = 1
	case cpualloc.FullPCPUsThenThreads:
		pol = 2
	case cpualloc.SpreadByPCPUs:
		pol = 3
	case cpualloc.DistributeAcrossNUMA:
		pol = 4
	case cpualloc.StaticBurst:
		pol = 5
	default:
		return 0, false
	}
	switch r.NUMAStrategy {
	case "":
	case cpualloc.MostAllocated:
		numa = 1
	case cpualloc.LeastAllocated:
		numa = 2
	default:
		return 0, false
	}
	switch r.Scoring {
	case "":
	case MostAllocated:
		score = 1
	case LeastAllocated:
		score = 2
	default:
		return 0, false
	}
	if r.CPUs < 0 || r.CPUs >= 1<<16 || r.RequestMilli < 0 || r.RequestMilli >= 1<<40 {
		return 0, false
	}
	key = 1<<63 | uint64(r.RequestMilli)<<23 | score<<21 | numa<<19 | pol<<16 | uint64(r.CPUs)
	if r.Memory != (cpualloc.Memory{}) {
		key |= memoMemory
	}
	return key, true
}
