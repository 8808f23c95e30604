package cpualloc

import (
	"math/bits"
	"slices"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Bits is a set of CPU ids kept as bits: CPU i is bit i%64 of word i/64.
// A State's exclusive CPUs are kept this way because a decision reads them
// whole, and turning a map-based cpuset.CPUSet of a few hundred CPUs into
// bits cost as much as the rest of a decision. Like cpuset.CPUSet it is a
// value: no method changes the receiver. The zero value is the empty set.
//
// Only ids 0..topology.MaxCPUID are held; others are dropped, since no
// machine has such a CPU to hand out.
type Bits struct{ w []uint64 }

// NewBits is the set of ids.
func NewBits(ids ...int) Bits {
	var b Bits
	for _, id := range ids {
		b.w = setBit(b.w, id)
	}
	return b
}

// BitsOfWords is a copy of words as bits (CPU i is bit i%64 of word i/64),
// ids beyond topology.MaxCPUID dropped.
func BitsOfWords(words []uint64) Bits {
	// MaxCPUID+1 is a multiple of 64: whole words hold exactly the ids kept.
	return Bits{slices.Clone(words[:min(len(words), topology.MaxCPUID>>6+1)])}
}

// BitsOf is s as bits.
func BitsOf(s cpuset.CPUSet) Bits { return Bits{}.Union(s) }

func setBit(w []uint64, id int) []uint64 {
	if id < 0 || id > topology.MaxCPUID {
		return w
	}
	if need := id>>6 + 1; need > len(w) {
		w = append(w, make([]uint64, need-len(w))...)
	}
	w[id>>6] |= 1 << (uint(id) & 63)
	return w
}

// Union is b with s's ids added.
func (b Bits) Union(s cpuset.CPUSet) Bits {
	w := slices.Clone(b.w)
	for _, id := range s.UnsortedList() {
		w = setBit(w, id)
	}
	return Bits{w}
}

// Difference is b without s's ids.
func (b Bits) Difference(s cpuset.CPUSet) Bits {
	w := slices.Clone(b.w)
	for _, id := range s.UnsortedList() {
		if id >= 0 && id>>6 < len(w) {
			w[id>>6] &^= 1 << (uint(id) & 63)
		}
	}
	return Bits{w}
}

// Overlap is the ids of s that b holds.
func (b Bits) Overlap(s cpuset.CPUSet) cpuset.CPUSet {
	var ids []int
	for _, id := range s.UnsortedList() {
		if b.Contains(id) {
			ids = append(ids, id)
		}
	}
	return cpuset.New(ids...)
}

// Contains says whether id is in b.
func (b Bits) Contains(id int) bool { return bitset(b.w).has(id) }

// Size is the number of ids in b.
func (b Bits) Size() int {
	n := 0
	for _, word := range b.w {
		n += bits.OnesCount64(word)
	}
	return n
}

// IsEmpty says whether b holds no id.
func (b Bits) IsEmpty() bool {
	for _, word := range b.w {
		if word != 0 {
			return false
		}
	}
	return true
}

// CPUSet is b as a cpuset.CPUSet.
func (b Bits) CPUSet() cpuset.CPUSet {
	ids := make([]int, 0, b.Size())
	for i, word := range b.w {
		for ; word != 0; word &= word - 1 {
			ids = append(ids, i<<6+bits.TrailingZeros64(word))
		}
	}
	return cpuset.New(ids...)
}

// String is b in the kernel's list format, as cpuset.CPUSet prints it.
func (b Bits) String() string { return b.CPUSet().String() }
