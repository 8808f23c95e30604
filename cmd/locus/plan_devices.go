package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// planDevice is a --near-device device as -o json shows it: NUMANode is
// null when the firmware does not report the device's node.
type planDevice struct {
	Address  string `json:"address"`
	NUMANode *int   `json:"numaNode"`
}

// planNear is what --near-device asks of a plan: the devices, the nodes
// of those whose node is known, and a note for each whose node is not.
type planNear struct {
	devices []planDevice
	nodes   []int
	notes   []string
}

// nearDevices looks every --near-device address up in the machine. An
// address that is malformed or that the machine does not have is the
// caller's mistake (exit 2), named with the flag and the value; a device
// whose node is unknown is noted and left out of the placement, never
// guessed.
func nearDevices(t *topology.Topology, flags []string) (planNear, error) {
	var p planNear
	if len(flags) > workload.MaxDevices {
		return p, usagef("--near-device: %d devices, at most %d", len(flags), workload.MaxDevices)
	}
	for _, v := range flags {
		addr, err := topology.ParsePCIAddress(v)
		if err != nil {
			return p, usagef("--near-device: %v", err)
		}
		d, ok := t.Device(addr)
		if !ok {
			return p, usagef("--near-device %s: no PCI device of that address on this machine (%d devices; locus topology lists them)",
				topology.Quote(v), len(t.Devices))
		}
		if slices.ContainsFunc(p.devices, func(s planDevice) bool { return s.Address == addr }) {
			continue
		}
		if d.NUMA == topology.NUMAUnknown {
			p.devices = append(p.devices, planDevice{Address: addr})
			p.notes = append(p.notes, fmt.Sprintf("device %s: the firmware does not report its NUMA node (numa_node -1); placed without it", addr))
			continue
		}
		node := d.NUMA
		p.devices = append(p.devices, planDevice{Address: addr, NUMANode: &node})
		if !slices.Contains(p.nodes, node) {
			p.nodes = append(p.nodes, node)
		}
	}
	slices.Sort(p.nodes)
	return p, nil
}

// writePlanNear prints the devices' lines of the table: where they are,
// whether the plan is next to them, and the notes.
func writePlanNear(w io.Writer, p planJSON) error {
	var err error
	if len(p.Near) > 0 {
		aligned := "yes: the CPUs and memory are on the devices' nodes"
		if !*p.Aligned {
			aligned = "no: the CPUs or memory did not fit on the devices' nodes; the nearest nodes were taken"
		}
		_, err = fmt.Fprintf(w, "near:        %s (the devices' nodes)\naligned:     %s\n", joinIDs(p.Near), aligned)
	}
	for _, n := range p.Notes {
		if err == nil {
			_, err = fmt.Fprintf(w, "note:        %s\n", n)
		}
	}
	return err
}
