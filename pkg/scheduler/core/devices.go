package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Devices is what a pod holds that hangs off NUMA nodes: the device-plugin
// resources it requests (by extended resource name and count), and the
// devices of its allocated DRA claims, by the PCI address or the NUMA node
// their ResourceSlice publishes (a claim is allocated on one node: these
// are that node's).
type Devices struct {
	Resources map[string]int64
	PCI       []string
	Nodes     []int
}

// Empty says the pod holds no device to place its CPUs next to.
func (d *Devices) Empty() bool {
	return d == nil || (len(d.Resources) == 0 && len(d.PCI) == 0 && len(d.Nodes) == 0)
}

// MaxDeviceResources bounds the extended resources one pod's devices name.
const MaxDeviceResources = 16

// deviceZones is what a report says of the devices on each NUMA node: the
// PCI functions attached (nrt.AttributePCIDevices) and the extended
// resources its zones list, by name, with what each zone has available.
type deviceZones struct {
	pci       map[string]int
	resources map[string]map[int]int64
	// err says why the report's devices cannot be read; then none is known.
	err error
}

// readDevices reads the zones' devices, bounded: every zone's attribute
// is bounded by nrt.ReadPCIDevices, and all zones together list at most
// topology.MaxPCIDevices addresses; resources are bounded per zone by
// checkSizes. An error leaves no device known, and says why.
func readDevices(zones []nrt.Zone) deviceZones {
	var d deviceZones
	total := 0
	for _, z := range zones {
		id, ok := zoneID(z)
		if !ok {
			continue
		}
		addrs, _, err := nrt.ReadPCIDevices(z)
		if err != nil {
			return deviceZones{err: err}
		}
		if total += len(addrs); total > topology.MaxPCIDevices {
			return deviceZones{err: fmt.Errorf("zones: attribute %s: %d addresses in all, more than %d", nrt.AttributePCIDevices, total, topology.MaxPCIDevices)}
		}
		for _, a := range addrs {
			if d.pci == nil {
				d.pci = map[string]int{}
			}
			d.pci[a] = id
		}
		for _, r := range z.Resources {
			if !extendedResource(r.Name) {
				continue
			}
			if d.resources == nil {
				d.resources = map[string]map[int]int64{}
			}
			if d.resources[r.Name] == nil {
				d.resources[r.Name] = map[int]int64{}
			}
			d.resources[r.Name][id] = r.Available.Value()
		}
	}
	return d
}

// extendedResource says whether a zone's resource is a device's: a
// domain-qualified name (nvidia.com/gpu), not CPU, memory or huge pages.
func extendedResource(name string) bool {
	return strings.Contains(name, "/") && !strings.HasPrefix(name, "kubernetes.io/")
}

// near is the NUMA nodes the pod's devices hang off on this node, and
// whether every device's node is known. A device-plugin resource is near
// the zones that have its whole count available, or, when none does, every
// zone that has some; a DRA device is near its zone.
func (d deviceZones) near(devs *Devices) (nodes []int, known bool) {
	known = true
	add := func(id int) {
		if !slices.Contains(nodes, id) {
			nodes = append(nodes, id)
		}
	}
	for _, name := range sortedKeys(devs.Resources) {
		var whole, some []int
		for _, id := range sortedKeys(d.resources[name]) {
			if avail := d.resources[name][id]; avail >= devs.Resources[name] {
				whole = append(whole, id)
			} else if avail > 0 {
				some = append(some, id)
			}
		}
		if len(whole) == 0 {
			whole = some
		}
		known = known && len(whole) > 0
		for _, id := range whole {
			add(id)
		}
	}
	for _, a := range devs.PCI {
		id, ok := d.pci[a]
		known = known && ok
		if ok {
			add(id)
		}
	}
	for _, id := range devs.Nodes {
		add(id)
	}
	slices.Sort(nodes)
	return nodes, known
}

func sortedKeys[K ~string | ~int, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// nearDevices is the nodes of the machine the request's devices hang off
// on this view, and whether all of theirs are known. A node the machine
// does not have (a slice's numaNode from elsewhere) is left out.
func (v *NodeView) nearDevices(req Request) ([]int, bool) {
	if req.Devices.Empty() {
		return nil, true
	}
	nodes, known := v.devices.near(req.Devices)
	nodes = slices.DeleteFunc(nodes, func(id int) bool {
		_, ok := v.machine.topo.Node(id)
		known = known && ok
		return !ok
	})
	return nodes, known && len(nodes) > 0
}

// Reassume places the pod the cluster assumed on node again, with req, on
// the node's current state (its own CPUs free for it), and assumes the new
// placement: the devices a pod was allocated in the same cycle are known
// only after its CPUs were chosen. When req no longer fits, the first
// assumption stands and the error says why. It returns the view placed on.
func (c *Cluster) Reassume(key, node string, req Request) (Placement, *NodeView, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.assumed[key]
	if !ok || old.node != node {
		return Placement{}, nil, fmt.Errorf("no allocation is assumed for %s on %s", key, node)
	}
	c.setAssumed(key, node, nil)
	cur := c.view(node)
	p, err := Place(cur, 0, req)
	if err != nil || p.Moves {
		c.setAssumed(key, node, &old)
		if err == nil {
			err = fmt.Errorf("%s fits next to its devices on %s only after moves", key, node)
		}
		return Placement{}, nil, err
	}
	c.setAssumed(key, node, &assumed{node: node, a: workload.Assignment{CPUs: p.Result.CPUs, Policy: p.Result.Policy, RequestMilli: req.RequestMilli},
		mem: holdOn(cur, p.Result.MemNodes, req.Memory)})
	return p, cur, nil
}

// setAssumed replaces (nil: drops) the allocation assumed for key on
// node, keeping the node's tally. The cluster's lock is held.
func (c *Cluster) setAssumed(key, node string, a *assumed) {
	defer c.retally(key, node)()
	if _, ok := c.assumed[key]; ok {
		delete(c.assumed, key)
		c.unindex(node, key)
	}
	if a != nil {
		c.assumed[key] = *a
		c.index(node, key)
	}
	c.dirty(node)
}
