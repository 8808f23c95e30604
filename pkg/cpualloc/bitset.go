package cpualloc

import "k8s.io/utils/cpuset"

// bitset is a compact set of CPU ids. k8s.io/utils/cpuset is map-based; a
// decision tests membership a few hundred times, so it converts its inputs
// into bitsets once and never touches a map again.
type bitset []uint64

func newBitset(words int) bitset { return make(bitset, words) }

func (b bitset) set(id int) {
	if id >= 0 && id>>6 < len(b) {
		b[id>>6] |= 1 << (uint(id) & 63)
	}
}

func (b bitset) has(id int) bool {
	return id >= 0 && id>>6 < len(b) && b[id>>6]&(1<<(uint(id)&63)) != 0
}

// iterationCost is how many map lookups one step of ranging over a map
// costs, roughly. Measured on a 1024-CPU state with 70 % of it taken,
// ranging over the set (one allocation for its list) beats probing every
// online CPU with Contains by 1.6x, so sets are ranged over unless they are
// as large as the machine.
const iterationCost = 1

// addSet sets every id of s that is in online; other ids (offline CPUs) are
// ignored because no decision can hand them out.
func (b bitset) addSet(s cpuset.CPUSet, online []int) {
	if n := s.Size(); n == 0 {
		return
	} else if n*iterationCost < len(online) {
		for _, id := range s.UnsortedList() {
			b.set(id)
		}
		return
	}
	for _, id := range online {
		if s.Contains(id) {
			b.set(id)
		}
	}
}

// addBits sets o's ids, those beyond b's length left out (no online CPU
// has them).
func (b bitset) addBits(o bitset) {
	for i := range min(len(b), len(o)) {
		b[i] |= o[i]
	}
}
