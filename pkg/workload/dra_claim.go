package workload

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"

	"github.com/locus-project/locus/pkg/quantity"
	"github.com/locus-project/locus/pkg/topology"
)

const (
	// MaxPodClaims bounds the ResourceClaims one pod names (the API's own
	// bound is 32).
	MaxPodClaims = 32
	// MaxClaimResults bounds the devices allocated to one claim (the API's
	// own bound is 32).
	MaxClaimResults = 32
	// MaxDRADevices bounds the devices a pod holds through all its claims.
	MaxDRADevices = 64
)

// ReasonDRADeviceUnplaced is the problem of a pinned pod holding a device of
// Dynamic Resource Allocation whose place the agent cannot tell: no
// ResourceSlice of the node publishes it (or the one that does was
// ignored), or it publishes neither a PCI address nor a NUMA node. Its CPUs
// are placed as if it did not hold that device.
const ReasonDRADeviceUnplaced = "DRADeviceUnplaced"

// NodeDevice is a device known only by the NUMA node it hangs off: a DRA
// driver's numaNode attribute, without a PCI address the machine has.
type NodeDevice struct {
	Name string // driver/pool/device
	NUMA int
}

// PodClaimNames is the names of the ResourceClaims a pod uses, in its
// namespace and in spec order: a claim it names (resourceClaimName), or the
// one generated from a template for it (status.resourceClaimStatuses). A
// template's claim not generated yet is left out; the pod does not run
// before it is.
func PodClaimNames(pod *corev1.Pod) ([]string, error) {
	claims := pod.Spec.ResourceClaims
	if len(claims) == 0 {
		return nil, nil
	}
	if len(claims) > MaxPodClaims {
		return nil, fmt.Errorf("spec.resourceClaims: %d claims, at most %d", len(claims), MaxPodClaims)
	}
	if len(pod.Status.ResourceClaimStatuses) > MaxPodClaims {
		return nil, fmt.Errorf("status.resourceClaimStatuses: %d claims, at most %d", len(pod.Status.ResourceClaimStatuses), MaxPodClaims)
	}
	generated := map[string]string{}
	for _, st := range pod.Status.ResourceClaimStatuses {
		if st.ResourceClaimName != nil {
			generated[st.Name] = *st.ResourceClaimName
		}
	}
	var names []string
	for i, c := range claims {
		name := generated[c.Name]
		if c.ResourceClaimName != nil {
			name = *c.ResourceClaimName
		}
		if name == "" {
			continue
		}
		if err := checkDRAName(fmt.Sprintf("spec.resourceClaims[%d]", i), name); err != nil {
			return nil, err
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// ParseClaimAllocation is the devices allocated to a claim
// (status.allocation.devices.results), each once, in order; none while it
// is not allocated.
func ParseClaimAllocation(c *resourceapi.ResourceClaim) ([]DRADevice, error) {
	if c.Status.Allocation == nil {
		return nil, nil
	}
	results := c.Status.Allocation.Devices.Results
	const field = "status.allocation.devices.results"
	if len(results) > MaxClaimResults {
		return nil, fmt.Errorf("%s: %d devices, at most %d", field, len(results), MaxClaimResults)
	}
	out := make([]DRADevice, 0, len(results))
	for i, r := range results {
		f := fmt.Sprintf("%s[%d]", field, i)
		for _, part := range []struct{ name, value string }{{".driver", r.Driver}, {".pool", r.Pool}, {".device", r.Device}} {
			if err := checkDRAName(f+part.name, part.value); err != nil {
				return nil, err
			}
		}
		d := DRADevice{Driver: r.Driver, Pool: r.Pool, Device: r.Device}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// PlaceDRADevices places the devices a pod holds on the machine: a device
// whose published PCI address the machine has is that address (for
// Workload.Devices, where pkg/decide finds its node as for a HostConfig's);
// one with a published NUMA node the machine has is that node
// (Workload.NodeDevices); any other is unplaced, with why. The machine's
// own view of a PCI address wins over a driver's numaNode.
func PlaceDRADevices(held []DRADevice, published map[DRADevice]DRAPlace, t *topology.Topology) (pci []string, nodes []NodeDevice, unplaced []string) {
	if len(held) > MaxDRADevices {
		return nil, nil, []string{fmt.Sprintf("%d devices through its claims, at most %d: none is placed", len(held), MaxDRADevices)}
	}
	for _, d := range held {
		place, ok := published[d]
		if !ok {
			unplaced = append(unplaced, d.String()+" (no ResourceSlice of this node publishes it)")
			continue
		}
		if _, onMachine := t.Device(place.PCI); place.PCI != "" && onMachine {
			if !slices.Contains(pci, place.PCI) {
				pci = append(pci, place.PCI)
			}
			continue
		}
		if place.NUMA != topology.NUMAUnknown && nodeOf(t, place.NUMA) {
			nodes = append(nodes, NodeDevice{Name: d.String(), NUMA: place.NUMA})
			continue
		}
		switch {
		case place.PCI != "":
			unplaced = append(unplaced, fmt.Sprintf("%s (PCI address %s is not a device of this machine)", d, place.PCI))
		case place.NUMA != topology.NUMAUnknown:
			unplaced = append(unplaced, fmt.Sprintf("%s (NUMA node %d is not a node of this machine)", d, place.NUMA))
		default:
			unplaced = append(unplaced, d.String()+" (its slice publishes neither "+AttributePCIBusID+" nor "+AttributeNUMANode+")")
		}
	}
	return pci, nodes, unplaced
}

func nodeOf(t *topology.Topology, id int) bool {
	_, ok := t.Node(id)
	return ok
}

// PodDeviceCounts is how many of each device plugin resource (PodDevices)
// the pod holds, as Kubernetes counts it: its app containers' requests
// together, or an init container's where that is more. A quantity that is
// not a whole count from 1 to MaxDRADevices counts as 1: the scheduler
// needs the node, not an exact figure.
func PodDeviceCounts(pod *corev1.Pod) map[string]int64 {
	names := PodDevices(pod)
	if len(names) == 0 {
		return nil
	}
	count := func(c corev1.Container, name string) int64 {
		q, ok := c.Resources.Requests[corev1.ResourceName(name)]
		if !ok {
			q = c.Resources.Limits[corev1.ResourceName(name)]
		}
		if !quantity.Bounded(&q) {
			return 1 // AsInt64 of "e122222222111" would not end
		}
		if n, exact := q.AsInt64(); exact && n >= 0 && n <= MaxDRADevices {
			return n
		}
		return 1
	}
	out := make(map[string]int64, len(names))
	for _, name := range names {
		var apps, init int64
		for _, c := range pod.Spec.Containers {
			apps = min(apps+count(c, name), MaxDRADevices)
		}
		for _, c := range pod.Spec.InitContainers {
			init = max(init, count(c, name))
		}
		out[name] = max(apps, init, 1)
	}
	return out
}
