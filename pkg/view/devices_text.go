package view

import (
	"io"
	"sort"

	"github.com/locus-project/locus/pkg/topology"
)

// DeviceHolders is, by PCI address, the workloads holding the device (from
// the agent's status, each workload's devices), in name order; nil when
// none holds any. The map, the table and the JSON of `locus topology` all
// name holders from it.
func (s *Snapshot) DeviceHolders() map[string][]string {
	var out map[string][]string
	for _, w := range s.Workloads {
		for _, addr := range w.Devices {
			if out == nil {
				out = map[string][]string{}
			}
			out[addr] = append(out[addr], w.Name)
		}
	}
	for _, hs := range out {
		sort.Strings(hs)
	}
	return out
}

// TopologyText writes the table of `locus topology` for s's machine, each
// device with the workloads holding it.
func TopologyText(w io.Writer, s *Snapshot) error {
	return topology.RenderTableHeld(w, s.Topology, s.DeviceHolders())
}

// TopologyJSON is the JSON of `locus topology -o json` for s's machine,
// each device with the workloads holding it (heldBy), which `locus plan
// --topology` reads back as the machine alone.
func TopologyJSON(s *Snapshot) ([]byte, error) {
	return s.Topology.JSONHeld(s.DeviceHolders())
}
