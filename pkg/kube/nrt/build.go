package nrt

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/podresources"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Input is what the object is built from.
type Input struct {
	Node     string
	Topology *topology.Topology
	Reserved cpuset.CPUSet
	// Kubelet are the CPUs the kubelet's static CPU manager holds alone:
	// taken, like a pod's exclusive CPUs.
	Kubelet cpuset.CPUSet
	// Assignments are the pods' CPU holdings by namespace/pod.
	Assignments map[string]workload.Assignment
	// Memory is, by namespace/pod, what each pod needs of memory and huge
	// pages (its requests): counted for a pod with an assignment placed
	// before the agent accounted memory (one without Assignment.Memory).
	Memory map[string]cpualloc.Memory
	// ContainerCPUs are, by namespace/pod, the parts of a container-scope
	// pod's CPUs by container, as CPU lists: the division the decision
	// applied (decide.WorkloadState.ContainerCPUs). Only pods with an
	// assignment are listed.
	ContainerCPUs map[string]map[string]string
	// Movable names, by namespace/pod, the pods that may be moved to other
	// CPUs (workload.MayMove, with the agent's moves switched on): each
	// zone counts the CPUs they hold there (AttributeMovableCPUs).
	Movable map[string]bool
	// Allocatable are the devices the node's plugins offer and InUse those
	// containers hold, as the kubelet's PodResources API reports them:
	// each zone lists the resources with devices on its node.
	Allocatable, InUse []podresources.Device
}

// LabelManagedBy marks the objects the agent writes.
const LabelManagedBy = "app.kubernetes.io/managed-by"

// Build makes the object. Per zone (NUMA node):
//
//   - cpu: capacity = its online CPUs; allocatable = capacity minus reserved
//     and isolated CPUs; available = allocatable minus CPUs held exclusively
//     (static-burst CPUs stay available: they are shared) and the CPUs the
//     kubelet's static CPU manager holds alone.
//   - memory: capacity = allocatable = MemTotal of the node; available =
//     allocatable minus what the pods holding CPUs hold there, as the
//     agent accounted it when it placed them (Assignment.MemHeld, or its
//     Memory over its MemNodes, else its CPUs' nodes, as cpualloc.Hold
//     spreads it; for an older assignment, the pod's request over its
//     CPUs' nodes), since its memory is bound to those nodes.
//   - hugepages-2Mi, hugepages-1Gi, on a node with a pool of that size:
//     capacity = allocatable = the pages reserved there times their size;
//     available = minus what pinned pods' huge page requests hold there,
//     spread as memory is.
//   - each device-plugin resource with devices on the node (their
//     topology, as the kubelet reports it): capacity = allocatable = those
//     devices, available = minus those containers hold (deviceResources).
//   - costs: the SLIT distance to every zone, itself included.
//   - attribute "cpus": the zone's online CPUs.
//   - attribute locus.io/movable-cpus: how many of its CPUs the pods named
//     in Movable hold (absent for none).
//   - attribute "locus.io/pci-devices": the PCI functions attached to the
//     node, bridges aside (AttributePCIDevices; absent when there are none).
//
// The annotation lists each pod's holding and, for a container-scope pod,
// each container's part of it.
//
// Equal inputs give byte-equal JSON.
func Build(in Input) (*Object, error) {
	t := in.Topology
	if t == nil {
		return nil, fmt.Errorf("no topology")
	}
	state := cpualloc.State{BurstMilli: map[int]int64{}}
	ct := CPUTopology{CPUs: t.CPUs, Reserved: in.Reserved.String(), Isolated: t.Isolated.String(), Kubelet: in.Kubelet.String(),
		Exclusive: map[string]string{}, StaticBurst: map[string]Burst{}, BurstMilli: map[string]int64{}}
	for _, name := range slices.Sorted(maps.Keys(in.Assignments)) {
		a := in.Assignments[name]
		state = state.With(cpualloc.Result{CPUs: a.CPUs}, cpualloc.Request{CPUs: a.CPUs.Size(), Policy: a.Policy, RequestMilli: a.RequestMilli})
		if parts := in.ContainerCPUs[name]; len(parts) > 0 {
			if ct.Containers == nil {
				ct.Containers = map[string]map[string]string{}
			}
			ct.Containers[name] = parts
		}
		if a.Policy == cpualloc.StaticBurst {
			ct.StaticBurst[name] = Burst{CPUs: a.CPUs.String(), RequestMilli: a.RequestMilli}
		} else {
			ct.Exclusive[name] = a.CPUs.String()
		}
	}
	for id, m := range state.BurstMilli {
		ct.BurstMilli[strconv.Itoa(id)] = m
	}
	raw, err := json.Marshal(ct)
	if err != nil {
		return nil, err
	}
	obj := &Object{APIVersion: APIVersion, Kind: Kind, Metadata: Metadata{Name: in.Node,
		Labels:      map[string]string{LabelManagedBy: "locus"},
		Annotations: map[string]string{AnnotationCPUTopology: string(raw)}}}
	unusable := in.Reserved.Union(t.Isolated)
	// The reserve of the system and the kubelet is the agent's to count:
	// the report shows the node's whole memory, as it always has.
	capacity := cpualloc.Capacity(t, cpualloc.Memory{})
	avail := available(t, capacity, in.Assignments, in.Memory)
	devices := pluginDevices(in.Allocatable, in.InUse)
	for _, n := range t.Nodes {
		z := Zone{Name: ZoneName(n.ID), Type: ZoneType}
		for _, other := range t.Nodes {
			z.Costs = append(z.Costs, Cost{Name: ZoneName(other.ID), Value: int64(t.Distance(n.ID, other.ID))})
		}
		if !n.CPUs.IsEmpty() {
			z.Attributes = []Attribute{{Name: "cpus", Value: n.CPUs.String()}}
			z.Attributes = append(z.Attributes, movableCPUs(n, in.Assignments, in.Movable)...)
		}
		if a, ok := pciDevicesAttribute(t, n.ID); ok {
			z.Attributes = append(z.Attributes, a)
		}
		if !n.CPUs.IsEmpty() {
			alloc := n.CPUs.Difference(unusable)
			avail := alloc.Difference(state.Exclusive.Overlap(alloc)).Difference(in.Kubelet)
			z.Resources = append(z.Resources, Resource{Name: "cpu",
				Capacity: count(n.CPUs.Size()), Allocatable: count(alloc.Size()), Available: count(avail.Size())})
		}
		z.Resources = append(z.Resources, memoryResources(n, capacity[n.ID], avail[n.ID])...)
		z.Resources = append(z.Resources, deviceResources(devices[n.ID])...)
		obj.Zones = append(obj.Zones, z)
	}
	return obj, nil
}

// ZoneName names the zone of a NUMA node.
func ZoneName(node int) string { return "node-" + strconv.Itoa(node) }

// ReadCPUTopology parses the annotation of a published object.
func ReadCPUTopology(raw string) (CPUTopology, error) {
	var ct CPUTopology
	if err := json.Unmarshal([]byte(raw), &ct); err != nil {
		return ct, fmt.Errorf("annotation %s: %w", AnnotationCPUTopology, err)
	}
	return ct, nil
}

func count(n int) resource.Quantity { return *resource.NewQuantity(int64(n), resource.DecimalSI) }
func byteQty(n int64) resource.Quantity {
	return *resource.NewQuantity(n, resource.BinarySI)
}
