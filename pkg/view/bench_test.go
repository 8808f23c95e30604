package view

import (
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// The map of the largest shipped machine (256 CPUs, 8 nodes), as /ui draws
// it every second per open page.
func BenchmarkSVGLargest(b *testing.B) {
	s := machineOnly(fixture.AMDNPS4)
	s.Agent, s.Pools.Shared = true, "0-255"
	for b.Loop() {
		_ = SVG(s)
	}
}

// One frame of locus top for the same machine in 80x24.
func BenchmarkFrameLargest(b *testing.B) {
	s := machineOnly(fixture.AMDNPS4)
	s.Agent, s.Pools.Shared = true, "0-255"
	for b.Loop() {
		_ = Frame(s, FrameOptions{Width: 80, Height: 24})
	}
}
