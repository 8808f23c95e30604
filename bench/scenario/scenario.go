// Package scenario holds the comparisons the project publishes: which
// machine, which reserved CPUs, which stream of pods, and which allocators see
// it. The packing command prints them; the tests and benchmarks replay them.
package scenario

import (
	"fmt"
	"io"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"

	"github.com/locus-project/locus/bench/kubelet"
	"github.com/locus-project/locus/bench/locus"
	"github.com/locus-project/locus/bench/packing"
)

// Contender makes a fresh allocator for a node.
type Contender struct {
	New func(t *topology.Topology, reserved cpuset.CPUSet) (packing.Allocator, error)
}

// Kubelet is kubelet's static CPU manager policy with cfg (Reserved is set
// from the scenario).
func Kubelet(cfg kubelet.Config) Contender {
	return Contender{New: func(t *topology.Topology, reserved cpuset.CPUSet) (packing.Allocator, error) {
		cfg.Reserved = reserved
		return kubelet.New(t, cfg)
	}}
}

// Locus is Locus's allocator with policies p.
func Locus(p locus.Policies) Contender {
	return Contender{New: func(t *topology.Topology, reserved cpuset.CPUSet) (packing.Allocator, error) {
		return locus.New(t, reserved, p)
	}}
}

// Scenario is one machine, one stream, several allocators.
type Scenario struct {
	Name     string
	Shape    fixture.Shape
	Reserved cpuset.CPUSet
	Mix      packing.Mix
	Load     float64
	Against  []Contender
}

// Stream is the scenario's stream of pods for a seed and length; its capacity
// is every CPU but the reserved ones.
func (s Scenario) Stream(seed uint64, pods int) packing.StreamConfig {
	t := fixture.MustBuild(s.Shape)
	return packing.StreamConfig{Seed: seed, Pods: pods, Mix: s.Mix, Load: s.Load,
		Capacity: t.CPUSet().Difference(s.Reserved).Size()}
}

// Run replays the same stream against every contender.
func (s Scenario) Run(cfg packing.StreamConfig) ([]packing.Result, error) {
	t := fixture.MustBuild(s.Shape)
	events, err := packing.Stream(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	var out []packing.Result
	for _, c := range s.Against {
		res, err := s.Replay(t, c, events)
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// Replay runs events against a fresh allocator of c on t, which must be the
// scenario's machine.
func (s Scenario) Replay(t *topology.Topology, c Contender, events []packing.Event) (packing.Result, error) {
	a, err := c.New(t, s.Reserved)
	if err != nil {
		return packing.Result{}, fmt.Errorf("%s: %w", s.Name, err)
	}
	res, err := packing.Run(t, a, events)
	if err != nil {
		return res, fmt.Errorf("%s: %w", s.Name, err)
	}
	return res, nil
}

// Report runs s and writes its heading, its table and each allocator's first
// NUMA misses.
func (s Scenario) Report(w io.Writer, cfg packing.StreamConfig) ([]packing.Result, error) {
	results, err := s.Run(cfg)
	if err != nil {
		return nil, err
	}
	t := fixture.MustBuild(s.Shape)
	fmt.Fprintf(w, "%s: %s (%d CPUs, %d NUMA nodes), reserved %s\n%s\n\n",
		s.Name, s.Shape.Name, len(t.CPUs), len(t.Nodes), s.Reserved, packing.Describe(cfg))
	if err := packing.WriteTable(w, results); err != nil {
		return nil, err
	}
	fmt.Fprintln(w)
	for _, r := range results {
		packing.WriteMisses(w, r)
	}
	return results, nil
}

// Intel and AMD reserve core 0 with its sibling, as --reserved-cpus=0,96 does.
var (
	intelReserved = cpuset.New(0, 96)
	amdReserved   = cpuset.New(0, 128)
)

var (
	kubeletDefault  = Kubelet(kubelet.Config{})
	kubeletBestEff  = Kubelet(kubelet.Config{TopologyManager: kubelet.TopologyBestEffort})
	kubeletSingle   = Kubelet(kubelet.Config{TopologyManager: kubelet.TopologySingleNUMANode})
	kubeletFull     = Kubelet(kubelet.Config{FullPCPUsOnly: true})
	kubeletFullBest = Kubelet(kubelet.Config{FullPCPUsOnly: true, TopologyManager: kubelet.TopologyBestEffort})
	locusFullOrSprd = Locus(locus.Policies{Whole: cpualloc.FullPCPUs, Partial: cpualloc.SpreadByPCPUs})
	locusSpread     = Locus(locus.Only(cpualloc.SpreadByPCPUs))
	locusFull       = Locus(locus.Only(cpualloc.FullPCPUs))
	locusDefault    = Locus(locus.Default())
	mixedContenders = []Contender{kubeletDefault, kubeletBestEff, kubeletSingle, locusFullOrSprd, locusSpread, locusDefault}
	wholeContenders = []Contender{kubeletFull, kubeletFullBest, locusFull}
)

// All are the published scenarios.
func All() []Scenario {
	return []Scenario{
		{Name: "mixed sizes", Shape: fixture.Intel2S96C, Reserved: intelReserved, Mix: packing.MixedSizes,
			Load: 1, Against: mixedContenders},
		{Name: "whole cores", Shape: fixture.Intel2S96C, Reserved: intelReserved, Mix: packing.EvenSizes,
			Load: 1, Against: wholeContenders},
		{Name: "mixed sizes, NPS4", Shape: fixture.AMDNPS4, Reserved: amdReserved, Mix: packing.MixedSizes,
			Load: 1, Against: mixedContenders},
	}
}
