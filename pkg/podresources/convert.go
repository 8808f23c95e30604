package podresources

import (
	"fmt"
	"slices"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/locus-project/locus/pkg/topology"
)

// budget counts what a whole answer holds against its totals, before any
// of it is copied.
type budget struct{ containers, ids, nodes int }

func (b *budget) take(field string, containers, ids, nodes int) error {
	b.containers += containers
	b.ids += ids
	b.nodes += nodes
	switch {
	case b.containers > MaxTotalContainers:
		return fmt.Errorf("%s: more than %d containers in the answer", field, MaxTotalContainers)
	case b.ids > MaxTotalIDs:
		return fmt.Errorf("%s: more than %d device ids in the answer", field, MaxTotalIDs)
	case b.nodes > MaxTotalNodes:
		return fmt.Errorf("%s: more than %d NUMA node entries in the answer", field, MaxTotalNodes)
	}
	return nil
}

// FromList is the pods of a List answer whose containers hold devices, with
// those containers only. Any list past its bound, any name too long or
// empty, any NUMA id out of range refuses the whole answer, naming the
// field and the value: a partial answer would place a pod as if it held
// fewer devices.
func FromList(resp *v1.ListPodResourcesResponse) ([]Pod, error) {
	pods := resp.GetPodResources()
	if len(pods) > MaxPods {
		return nil, fmt.Errorf("podResources: %d pods, at most %d", len(pods), MaxPods)
	}
	var b budget
	for i, p := range pods {
		field := fmt.Sprintf("podResources[%d]", i)
		if err := b.take(field+".containers", len(p.GetContainers()), 0, 0); err != nil {
			return nil, err
		}
		if err := checkPod(field, p, &b); err != nil {
			return nil, err
		}
	}
	var out []Pod
	for _, p := range pods {
		pod := Pod{Namespace: p.GetNamespace(), Name: p.GetName()}
		for _, c := range p.GetContainers() {
			if len(c.GetDevices()) > 0 {
				pod.Containers = append(pod.Containers, Container{Name: c.GetName(), Devices: devicesOf(c.GetDevices())})
			}
		}
		if len(pod.Containers) > 0 {
			out = append(out, pod)
		}
	}
	return out, nil
}

func checkPod(field string, p *v1.PodResources, b *budget) error {
	if err := checkName(field+".namespace", p.GetNamespace(), MaxNameBytes); err != nil {
		return err
	}
	if err := checkName(field+".name", p.GetName(), MaxNameBytes); err != nil {
		return err
	}
	cs := p.GetContainers()
	if len(cs) > MaxContainers {
		return fmt.Errorf("%s.containers: %d containers, at most %d", field, len(cs), MaxContainers)
	}
	for j, c := range cs {
		cf := fmt.Sprintf("%s.containers[%d]", field, j)
		if err := checkName(cf+".name", c.GetName(), MaxNameBytes); err != nil {
			return err
		}
		if len(c.GetDevices()) > MaxDeviceGroups {
			return fmt.Errorf("%s.devices: %d groups, at most %d", cf, len(c.GetDevices()), MaxDeviceGroups)
		}
		if err := checkGroups(cf+".devices", c.GetDevices(), b); err != nil {
			return err
		}
	}
	return nil
}

// FromAllocatable is every device the node's plugins offer, from a
// GetAllocatableResources answer, bounded as FromList is.
func FromAllocatable(resp *v1.AllocatableResourcesResponse) ([]Device, error) {
	groups := resp.GetDevices()
	if len(groups) > MaxAllocatableGroups {
		return nil, fmt.Errorf("devices: %d groups, at most %d", len(groups), MaxAllocatableGroups)
	}
	var b budget
	if err := checkGroups("devices", groups, &b); err != nil {
		return nil, err
	}
	return devicesOf(groups), nil
}

func checkGroups(field string, groups []*v1.ContainerDevices, b *budget) error {
	for k, d := range groups {
		df := fmt.Sprintf("%s[%d]", field, k)
		if err := checkName(df+".resourceName", d.GetResourceName(), MaxNameBytes); err != nil {
			return err
		}
		ids, nodes := d.GetDeviceIds(), d.GetTopology().GetNodes()
		if len(ids) > MaxIDs {
			return fmt.Errorf("%s.deviceIds: %d ids, at most %d", df, len(ids), MaxIDs)
		}
		if len(nodes) > MaxNodes {
			return fmt.Errorf("%s.topology.nodes: %d nodes, at most %d", df, len(nodes), MaxNodes)
		}
		if err := b.take(df, 0, len(ids), len(nodes)); err != nil {
			return err
		}
		for m, id := range ids {
			if err := checkName(fmt.Sprintf("%s.deviceIds[%d]", df, m), id, MaxIDBytes); err != nil {
				return err
			}
		}
		for m, n := range nodes {
			if id := n.GetID(); id < 0 || id > topology.MaxNodeID {
				return fmt.Errorf("%s.topology.nodes[%d].ID: %d, not a NUMA node (0 to %d)", df, m, id, topology.MaxNodeID)
			}
		}
	}
	return nil
}

func checkName(field, s string, maxBytes int) error {
	switch {
	case s == "":
		return fmt.Errorf("%s: empty", field)
	case len(s) > maxBytes:
		return fmt.Errorf("%s: %s, more than %d bytes", field, topology.Quote(s), maxBytes)
	}
	return nil
}

// devicesOf copies groups already checked.
func devicesOf(groups []*v1.ContainerDevices) []Device {
	out := make([]Device, 0, len(groups))
	for _, d := range groups {
		dev := Device{Resource: d.GetResourceName(), IDs: slices.Clone(d.GetDeviceIds())}
		for _, n := range d.GetTopology().GetNodes() {
			dev.Nodes = append(dev.Nodes, int(n.GetID()))
		}
		slices.Sort(dev.Nodes)
		dev.Nodes = slices.Compact(dev.Nodes)
		out = append(out, dev)
	}
	return out
}
