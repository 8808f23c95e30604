package core

import (
	"errors"
	"math/rand/v2"
	"testing"
	"unsafe"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

// A memo answers as a memo of sixteen slots filled round robin does,
// whatever the memories its requests ask: more distinct ones than it has
// slots, the same one under other keys, requests without memory between.
func TestMemoKeepsMemoriesOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 44))
	type slot struct {
		key   uint64
		mem   cpualloc.Memory
		score int64
		err   error
	}
	var m memo
	var want [memoSize]slot
	next := 0
	for step := range 2000 {
		key := 1<<63 | uint64(rng.IntN(6))
		var mem cpualloc.Memory
		if rng.IntN(4) != 0 {
			key |= memoMemory
			mem = cpualloc.Memory{Bytes: uint64(1+rng.IntN(40)) << 28}
		}
		if _, ok, _ := m.get(key, mem); !ok {
			var err error
			if rng.IntN(5) == 0 {
				err = errors.New("does not fit")
			}
			score := rng.Int64N(100)
			m.put(key, mem, score, err)
			want[next], next = slot{key, mem, score, err}, (next+1)%memoSize
		}
		for _, w := range want {
			if w.key == 0 {
				continue
			}
			score, ok, err := m.get(w.key, w.mem)
			// A request is put only when no slot has it: one slot answers.
			if !ok || score != w.score || err != w.err {
				t.Fatalf("step %d: key %x memory %v: got %d %t %v, want %d %v", step, w.key, w.mem, score, ok, err, w.score, w.err)
			}
		}
		if len(m.mems) > memoSize {
			t.Fatalf("step %d: %d memories kept for %d slots", step, len(m.mems), memoSize)
		}
	}
}

// A memo of requests that all ask the same memory keeps it once, and a
// view keeps no placement state of its own beyond its memo: a view and a
// memo are one each a node, on every node.
func TestViewAndMemoSmall(t *testing.T) {
	var m memo
	for i := range memoSize {
		m.put(1<<63|memoMemory|uint64(i), cpualloc.Memory{Bytes: 256 << 20}, int64(i), nil)
	}
	if len(m.mems) != 1 {
		t.Fatalf("sixteen requests of 256Mi keep %d memories, want 1", len(m.mems))
	}
	if size := unsafe.Sizeof(memo{}) + uintptr(cap(m.mems))*unsafe.Sizeof(cpualloc.Memory{}); size > 400 {
		t.Fatalf("a memo of sixteen requests with memory takes %d bytes, want at most 400 (it was 680)", size)
	}
	if size := unsafe.Sizeof(NodeView{}); size > 192 {
		t.Fatalf("a view takes %d bytes, want at most 192 (it was 232 with a state kept once made)", size)
	}
}
