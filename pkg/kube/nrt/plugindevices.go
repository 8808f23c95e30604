package nrt

import (
	"maps"
	"slices"

	"github.com/locus-project/locus/pkg/podresources"
)

// MaxDeviceResources bounds the device-plugin resources listed per zone;
// past it, the first by name are listed. A node has a handful.
const MaxDeviceResources = 32

// deviceCount is one resource's devices on one zone: offered, and of those
// held by a container.
type deviceCount struct{ capacity, used int }

// pluginDevices counts, by NUMA node and resource, the devices the node's
// plugins offer with a topology (allocatable, from GetAllocatableResources)
// and those containers hold (inUse, from List). A device reporting several
// nodes counts on each: it is next to every one of them. A device without
// topology is on no zone.
func pluginDevices(allocatable, inUse []podresources.Device) map[int]map[string]deviceCount {
	held := map[[2]string]bool{}
	for _, d := range inUse {
		for _, id := range d.IDs {
			held[[2]string{d.Resource, id}] = true
		}
	}
	out := map[int]map[string]deviceCount{}
	seen := map[[2]string]bool{}
	for _, d := range allocatable {
		for _, id := range d.IDs {
			key := [2]string{d.Resource, id}
			if seen[key] {
				continue
			}
			seen[key] = true
			for _, n := range d.Nodes {
				if out[n] == nil {
					out[n] = map[string]deviceCount{}
				}
				c := out[n][d.Resource]
				c.capacity++
				if held[key] {
					c.used++
				}
				out[n][d.Resource] = c
			}
		}
	}
	return out
}

// deviceResources are node's entries: one per resource, named as the
// device plugin names it, capacity = allocatable = its devices there,
// available = less those held; sorted by name, at most MaxDeviceResources.
func deviceResources(counts map[string]deviceCount) []Resource {
	names := slices.Sorted(maps.Keys(counts))
	names = names[:min(len(names), MaxDeviceResources)]
	out := make([]Resource, 0, len(names))
	for _, name := range names {
		c := counts[name]
		out = append(out, Resource{Name: name, Capacity: count(c.capacity), Allocatable: count(c.capacity),
			Available: count(c.capacity - c.used)})
	}
	return out
}
