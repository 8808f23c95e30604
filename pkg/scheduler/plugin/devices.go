package plugin

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/locus-project/locus/pkg/kube/draapi"
	"github.com/locus-project/locus/pkg/kube/kubeclient/clientset"
	"github.com/locus-project/locus/pkg/scheduler/core"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// celCacheSize is the device class selectors kept compiled, as many as
// the DynamicResources plugin keeps.
const celCacheSize = 10

// maxPodSlices bounds the ResourceSlices read for one pod: those of the
// pools its devices come from.
const maxPodSlices = 64

// draSource reads what a pod's DRA devices are: the framework's DRA
// manager where the scheduler runs DynamicResources (its claims include
// those allocated in this cycle once written), else listers of the API
// server's objects where it serves them.
type draSource struct {
	claim  func(namespace, name string) (*resourceapi.ResourceClaim, error)
	slices func() ([]*resourceapi.ResourceSlice, error)
	// manager is the framework's DRA manager, nil where the scheduler
	// does not run DynamicResources: then no claim is allocated in a
	// cycle of this scheduler, and none is foreseen (pending.go).
	manager framework.SharedDRAManager
	// cel keeps the device classes' compiled selectors between cycles,
	// as the DynamicResources plugin keeps its own.
	cel *cel.Cache
}

// newDRASource is nil where neither is there: no pod's claims are read.
// The listers are asked for only when the API serves the group, so that the
// scheduler's informers never wait on a resource it does not have.
func newDRASource(ctx context.Context, h framework.Handle) *draSource {
	if m := h.SharedDRAManager(); m != nil {
		return &draSource{claim: m.ResourceClaims().Get, slices: m.ResourceSlices().ListWithDeviceTaintRules,
			manager: m, cel: cel.NewCache(celCacheSize)}
	}
	client, factory := h.ClientSet(), h.SharedInformerFactory()
	if client == nil || factory == nil {
		return nil
	}
	if !draapi.Served(ctx, clientset.Wrap(client)) {
		klog.FromContext(ctx).V(2).Info("no DRA devices read: the API server does not serve the group", "group", resourceapi.SchemeGroupVersion.String())
		return nil
	}
	// An informer the scheduler may not list would hold its start for
	// ever (a ClusterRole from before it read claims): asked once, first.
	if err := draapi.Listable(ctx, clientset.Wrap(client)); err != nil {
		klog.FromContext(ctx).Info("no DRA devices read", "err", err)
		return nil
	}
	f := factory.Resource().V1beta1()
	claims, sl := f.ResourceClaims().Lister(), f.ResourceSlices().Lister()
	return &draSource{
		claim:  func(ns, name string) (*resourceapi.ResourceClaim, error) { return claims.ResourceClaims(ns).Get(name) },
		slices: func() ([]*resourceapi.ResourceSlice, error) { return sl.List(labels.Everything()) },
	}
}

// podDevices is what the pod holds that hangs off NUMA nodes: its device
// plugin resources and its allocated claims' devices; nil for none. What
// cannot be read is left out (logged): the pod is then scored as one
// without that device, never refused.
func (p *Plugin) podDevices(ctx context.Context, pod *v1.Pod) *core.Devices {
	d := &core.Devices{Resources: workload.PodDeviceCounts(pod)}
	if p.dra != nil && len(pod.Spec.ResourceClaims) > 0 {
		d.PCI, d.Nodes = p.draDevices(ctx, pod)
	}
	if d.Empty() {
		return nil
	}
	return d
}

// draDevices places the devices of the pod's allocated claims by what
// their slices publish: a PCI address (the report's zones say its node) or
// a NUMA node.
func (p *Plugin) draDevices(ctx context.Context, pod *v1.Pod) (pci []string, nodes []int) {
	logger := klog.FromContext(ctx)
	names, err := workload.PodClaimNames(pod)
	if err != nil {
		logger.V(2).Info("the pod's claims cannot be read", "pod", klog.KObj(pod), "err", err)
		return nil, nil
	}
	var held []workload.DRADevice
	for _, name := range names {
		c, err := p.dra.claim(pod.Namespace, name)
		if err != nil {
			continue // not created yet: nothing allocated
		}
		devs, err := workload.ParseClaimAllocation(c)
		if err != nil {
			logger.V(2).Info("a claim's allocation cannot be read", "pod", klog.KObj(pod), "claim", name, "err", err)
			continue
		}
		held = append(held, devs...)
	}
	return p.placeDRA(logger, held)
}

// placeDRA places allocated DRA devices by what their slices publish: a
// PCI address, or a NUMA node; a device no slice places is left out.
func (p *Plugin) placeDRA(logger klog.Logger, held []workload.DRADevice) (pci []string, nodes []int) {
	if len(held) == 0 || len(held) > workload.MaxDRADevices {
		return nil, nil
	}
	published := p.publishedFor(logger, held)
	for _, dev := range held {
		place, ok := published[dev]
		switch {
		case !ok:
		case place.PCI != "":
			pci = append(pci, place.PCI)
		case place.NUMA != topology.NUMAUnknown && !slices.Contains(nodes, place.NUMA):
			nodes = append(nodes, place.NUMA)
		}
	}
	return pci, nodes
}

// publishedFor reads the slices of the pools the devices come from, at
// most maxPodSlices; a slice that cannot be read is skipped, logged.
func (p *Plugin) publishedFor(logger klog.Logger, held []workload.DRADevice) map[workload.DRADevice]workload.DRAPlace {
	all, err := p.dra.slices()
	if err != nil {
		logger.V(2).Info("ResourceSlices cannot be listed", "err", err)
		return nil
	}
	out := map[workload.DRADevice]workload.DRAPlace{}
	read := 0
	for _, s := range all {
		if !slices.ContainsFunc(held, func(d workload.DRADevice) bool { return d.Driver == s.Spec.Driver && d.Pool == s.Spec.Pool.Name }) {
			continue
		}
		if read++; read > maxPodSlices {
			logger.V(2).Info(fmt.Sprintf("the pod's devices' pools have more than %d ResourceSlices; the rest are not read", maxPodSlices))
			break
		}
		devs, err := workload.ParseResourceSlice(s)
		if err != nil {
			logger.Info("ResourceSlice ignored", "slice", s.Name, "err", err)
			continue
		}
		for k, v := range devs {
			out[k] = v
		}
	}
	return out
}
