package plugin

import (
	"math/rand/v2"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Every NodeInfo put is found with its slot, one never put is not, and a
// table grown from another (the framework without a list) keeps all.
func TestInfoSlots(t *testing.T) {
	const n = 3000
	infos := make([]*framework.NodeInfo, n)
	for i := range infos {
		infos[i] = framework.NewNodeInfo()
	}
	tab := newInfoSlots(n)
	for i, ni := range infos {
		tab.put(ni, i*7)
	}
	tab.put(infos[5], 35) // again: no second entry
	if tab.n != n || len(tab.at) < 2*n {
		t.Fatalf("%d entries in %d places, want %d in at least %d", tab.n, len(tab.at), n, 2*n)
	}
	for i, ni := range infos {
		if slot, ok := tab.get(ni); !ok || slot != i*7 {
			t.Fatalf("NodeInfo %d: slot %d %v, want %d", i, slot, ok, i*7)
		}
	}
	if _, ok := tab.get(framework.NewNodeInfo()); ok {
		t.Error("a NodeInfo never put was found")
	}
	grown := newInfoSlots(tab.n + 1)
	tab.each(grown.put)
	extra := framework.NewNodeInfo()
	grown.put(extra, -1)
	for i, ni := range infos {
		if slot, ok := grown.get(ni); !ok || slot != i*7 {
			t.Fatalf("grown, NodeInfo %d: slot %d %v, want %d", i, slot, ok, i*7)
		}
	}
	if slot, ok := grown.get(extra); !ok || slot != -1 {
		t.Errorf("grown, the one added: %d %v", slot, ok)
	}
}

// BenchmarkInfoSlots is Score's look-up of a node's slot at 5000 nodes,
// the nodes asked in random order: the table against the Go map it
// replaced, side by side.
func BenchmarkInfoSlots(b *testing.B) {
	const n = 5000
	infos := make([]*framework.NodeInfo, n)
	m := make(map[*framework.NodeInfo]int, n)
	tab := newInfoSlots(n)
	for i := range infos {
		infos[i] = framework.NewNodeInfo()
		m[infos[i]] = i
		tab.put(infos[i], i)
	}
	order := rand.New(rand.NewPCG(1, 2)).Perm(n)
	b.Run("map", func(b *testing.B) {
		sum := 0
		for i := 0; b.Loop(); i++ {
			sum += m[infos[order[i%n]]]
		}
		_ = sum
	})
	b.Run("table", func(b *testing.B) {
		sum := 0
		for i := 0; b.Loop(); i++ {
			s, _ := tab.get(infos[order[i%n]])
			sum += s
		}
		_ = sum
	})
}
