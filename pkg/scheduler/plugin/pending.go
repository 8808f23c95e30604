package plugin

import (
	"context"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"

	"github.com/locus-project/locus/pkg/scheduler/core"
	"github.com/locus-project/locus/pkg/workload"
)

// The devices of a pod's pending claims are not known when its nodes are
// scored: the DynamicResources plugin allocates them in its Reserve, on
// the node chosen. So that a node's score follows the device the pod
// would get there, each node is scored with the devices the same
// allocator (k8s.io/dynamic-resource-allocation/structured) gives there,
// on the inputs the DynamicResources plugin gives it: the pending claims,
// the device classes, the slices and the devices already allocated. The
// allocator takes the first devices that fit, so on the same inputs it
// foresees the allocation; where it does not (another pod took the device
// meanwhile), realign places the CPUs next to the device actually given.

// allocatedDevicesTries bounds the reads of the devices allocated, which
// fail when a claim changes during the read, as the DynamicResources
// plugin's do.
const allocatedDevicesTries = 3

// pendingClaims says whether some claim of the pod is not allocated yet,
// and returns the allocator of those claims where the scheduler runs
// DynamicResources (nil otherwise, or when it cannot be made: the nodes
// are then scored without the devices, as before the allocation).
func (p *Plugin) pendingClaims(ctx context.Context, pod *v1.Pod) (bool, *structured.Allocator) {
	if p.dra == nil || len(pod.Spec.ResourceClaims) == 0 {
		return false, nil
	}
	names, err := workload.PodClaimNames(pod)
	if err != nil {
		return false, nil // logged where its devices are read (draDevices)
	}
	var pending []*resourceapi.ResourceClaim
	for _, name := range names {
		c, err := p.dra.claim(pod.Namespace, name)
		if err == nil && c.Status.Allocation == nil {
			pending = append(pending, c)
		}
	}
	m := p.dra.manager
	if len(pending) == 0 || m == nil {
		return len(pending) > 0, nil
	}
	logger := klog.FromContext(ctx)
	var allocated sets.Set[structured.DeviceID]
	for range allocatedDevicesTries {
		if allocated, err = m.ResourceClaims().ListAllAllocatedDevices(); err == nil {
			break
		}
	}
	if err != nil {
		logger.V(2).Info("the devices allocated cannot be read: nodes scored without the pod's pending claims", "pod", klog.KObj(pod), "err", err)
		return true, nil
	}
	all, err := m.ResourceSlices().ListWithDeviceTaintRules()
	if err != nil {
		logger.V(2).Info("ResourceSlices cannot be listed: nodes scored without the pod's pending claims", "pod", klog.KObj(pod), "err", err)
		return true, nil
	}
	gate := utilfeature.DefaultFeatureGate
	feats := structured.Features{
		AdminAccess:          gate.Enabled(features.DRAAdminAccess),
		PrioritizedList:      gate.Enabled(features.DRAPrioritizedList),
		PartitionableDevices: gate.Enabled(features.DRAPartitionableDevices),
		DeviceTaints:         gate.Enabled(features.DRADeviceTaints),
	}
	a, err := structured.NewAllocator(ctx, feats, pending, allocated, m.DeviceClasses(), all, p.dra.cel)
	if err != nil {
		logger.V(2).Info("the pod's pending claims cannot be foreseen", "pod", klog.KObj(pod), "err", err)
		return true, nil
	}
	return true, a
}

// foreseenDevices are the pod's devices on node with those its pending
// claims would be allocated there; nil when the allocator gives none
// there that a slice places (the node is scored as without them).
func (p *Plugin) foreseenDevices(ctx context.Context, s *cycleState, node *v1.Node) *core.Devices {
	logger := klog.FromContext(ctx)
	results, err := s.foresee.Allocate(ctx, node)
	if err != nil || len(results) == 0 {
		if err != nil {
			logger.V(4).Info("the pod's pending claims cannot be foreseen on the node", "node", node.Name, "err", err)
		}
		return nil
	}
	var held []workload.DRADevice
	for i := range results {
		devs, err := workload.ParseClaimAllocation(&resourceapi.ResourceClaim{Status: resourceapi.ResourceClaimStatus{Allocation: &results[i]}})
		if err != nil {
			logger.V(4).Info("a foreseen allocation cannot be read", "node", node.Name, "err", err)
			return nil
		}
		held = append(held, devs...)
	}
	pci, nodes := p.placeDRA(logger, held)
	if len(pci) == 0 && len(nodes) == 0 {
		return nil
	}
	var d core.Devices
	if s.req.Devices != nil {
		d = *s.req.Devices
	}
	d.PCI = append(slices.Clone(d.PCI), pci...)
	d.Nodes = slices.Clone(d.Nodes)
	for _, n := range nodes {
		if !slices.Contains(d.Nodes, n) {
			d.Nodes = append(d.Nodes, n)
		}
	}
	return &d
}

// foreseenScore is the node's score with the devices the pod's pending
// claims would be allocated there; false where none is foreseen.
func (p *Plugin) foreseenScore(ctx context.Context, s *cycleState, v *core.NodeView, node *v1.Node) (int64, bool) {
	devs := p.foreseenDevices(ctx, s, node)
	if devs == nil {
		return 0, false
	}
	req := s.req
	req.Devices = devs
	score, err := core.ScoreOf(v, req)
	return score, err == nil
}
