package cpualloc

import (
	"math/rand/v2"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

func TestBits(t *testing.T) {
	b := NewBits(3, 64, -1, topology.MaxCPUID+1, 1<<40)
	if got := b.CPUSet(); !got.Equals(cpuset.New(3, 64)) {
		t.Fatalf("NewBits kept %s, want 3,64 (ids outside 0..MaxCPUID dropped)", got)
	}
	if b.Size() != 2 || b.IsEmpty() || !b.Contains(64) || b.Contains(4) || b.Contains(-1) || b.Contains(1<<20) {
		t.Fatalf("size %d, empty %v, 64 %v, 4 %v", b.Size(), b.IsEmpty(), b.Contains(64), b.Contains(4))
	}
	u := b.Union(cpuset.New(0, 200))
	d := u.Difference(cpuset.New(3, 200, 5000))
	if u.String() != "0,3,64,200" || d.String() != "0,64" || b.String() != "3,64" {
		t.Fatalf("union %s, difference %s, receiver %s after both", u, d, b)
	}
	if o := u.Overlap(cpuset.New(1, 3, 200, 9000)); !o.Equals(cpuset.New(3, 200)) {
		t.Fatalf("overlap of %s with 1,3,200,9000: %s", u, o)
	}
	if !(Bits{}).IsEmpty() || (Bits{}).Size() != 0 || !d.Difference(cpuset.New(0, 64)).IsEmpty() {
		t.Fatal("the zero value or an emptied set is not empty")
	}
	words := make([]uint64, topology.MaxCPUID>>6+3)
	words[0], words[len(words)-1] = 1<<3|1<<63, 1
	if w := BitsOfWords(words); w.String() != "3,63" {
		t.Fatalf("BitsOfWords kept %s, want 3,63 (ids beyond MaxCPUID dropped)", w)
	}
	w := BitsOfWords(words[:1])
	words[0] = 0
	if w.String() != "3,63" {
		t.Fatalf("BitsOfWords shares its words: %s after they changed", w)
	}
	if top := NewBits(topology.MaxCPUID); !top.Contains(topology.MaxCPUID) || top.Size() != 1 {
		t.Fatalf("the highest id: %s", top)
	}
}

func TestBitsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		ids := make([]int, r.IntN(300))
		for i := range ids {
			ids[i] = r.IntN(2048)
		}
		s := cpuset.New(ids...)
		if got := BitsOf(s); !got.CPUSet().Equals(s) || got.Size() != s.Size() {
			t.Fatalf("BitsOf(%s) = %s", s, got)
		}
	}
}
