package plugin

import (
	"fmt"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/framework"
)

type otherState struct{}

func (otherState) Clone() framework.StateData { return otherState{} }

// BenchmarkState is Filter's and Score's look-up of the cycle's state,
// once per node: from the cycle's map (as the other plugins' states lie
// beside it), and the state PreFilter kept.
func BenchmarkState(b *testing.B) {
	cs := framework.NewCycleState()
	for i := range 12 {
		cs.Write(framework.StateKey(fmt.Sprintf("PreFilterNodeResourcesFit%d", i)), otherState{})
	}
	p := &Plugin{}
	s := &cycleState{cs: cs}
	cs.Write(stateKey, s)
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			if got, ok := readState(cs); !ok || got != s {
				b.Fatal("no state")
			}
		}
	})
	p.last.Store(s)
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			if got, ok := p.state(cs); !ok || got != s {
				b.Fatal("no state")
			}
		}
	})
}
