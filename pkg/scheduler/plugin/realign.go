package plugin

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/podplan"
	"github.com/locus-project/locus/pkg/workload"
)

// realign chooses the pod's CPUs again next to the DRA devices it was
// allocated in this very cycle. The DynamicResources plugin allocates a
// pod's pending claims in its Reserve, after this plugin's Filter and
// Score, and writes them in its PreBind; the decision is written after
// that (by this plugin's Bind, or its PreBind, which runs after the
// default plugins'), so it reads the claims there. A pod whose claims
// were all allocated before the cycle was placed with them already and is
// left as it is; one with some pending is placed again with all its
// devices, those allocated before included; where the devices' node
// cannot hold the CPUs the first choice stands.
func (p *Plugin) realign(ctx context.Context, s *cycleState, pod *v1.Pod, node string) {
	s.mu.Lock()
	done := s.realigned || s.final == nil || s.final.Moves
	s.realigned = true
	s.mu.Unlock()
	if done || !s.pending {
		return
	}
	devs := p.podDevices(ctx, pod)
	if devs == nil || (len(devs.PCI) == 0 && len(devs.Nodes) == 0) {
		return
	}
	req := s.req
	req.Devices = devs
	logger := klog.FromContext(ctx)
	final, view, err := p.cluster.Reassume(podplan.Name(pod), node, req)
	if err != nil {
		logger.V(2).Info("CPUs not chosen again next to the devices allocated in this cycle", "pod", klog.KObj(pod), "node", node, "err", err)
		return
	}
	parts := ""
	if cs := req.Containers; len(cs) > 0 {
		if pt, err := cpualloc.Partition(view.Topology(), final.Result.CPUs, cs); err == nil {
			parts = workload.FormatContainerCPUSets(pt)
		}
	}
	s.mu.Lock()
	s.final, s.parts, s.req = &final, parts, req
	s.mu.Unlock()
	logger.V(2).Info("CPUs chosen again next to the devices allocated in this cycle", "pod", klog.KObj(pod), "node", node,
		"cpus", final.Result.CPUs.String(), "numaNodes", final.Result.NUMANodes, "unaligned", final.Unaligned)
}
