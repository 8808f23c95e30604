package nodeagent

import (
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/source"
)

// Reconciled implements source.Source: it hands the pods' cpusets to
// the containers that appear before the next decision (earlypin) and
// publishes the node's NodeResourceTopology from the decision.
func (s *Source) Reconciled(d source.Outcome) {
	for _, dir := range s.early.Follow(s.earlyw, s.driver, d.Unlisted) {
		if s.cgw != nil {
			s.cgw.Adopt(dir)
		}
	}
	if s.nrt == nil {
		return
	}
	in := nrt.Input{Node: s.opts.NodeName, Topology: d.Topology, Reserved: d.Reserved, Kubelet: d.Kubelet,
		Assignments: d.Assignments, Memory: s.memReq, ContainerCPUs: d.ContainerCPUs(), Movable: s.movable}
	if s.devices != nil {
		in.Allocatable, in.InUse = s.devices.allocatable, s.devices.inUse
	}
	obj, err := nrt.Build(in)
	if err != nil {
		s.log.Warn("cannot build the NodeResourceTopology", "err", err)
		return
	}
	s.nrt.Set(obj)
}
