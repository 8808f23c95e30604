package view

import (
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// Every device is drawn once, on its node, or among the devices of unknown
// node; bridges and the like are counted on their node.
func TestSVGDrawsDevicesOnTheirNode(t *testing.T) {
	s := fixture.DeviceNodeUnknown
	s.Devices = append(s.Devices[:len(s.Devices):len(s.Devices)],
		fixture.Device{Address: "0000:00:00.0", Class: 0x060000, Vendor: fixture.VendorIntel, Device: 0x09a2, Node: 1})
	snap := machineOnly(s)
	drawn := map[string]element{}
	others := 0
	for _, e := range parseSVG(t, SVG(snap)) {
		if hasClass(e, "device") {
			if _, twice := drawn[e.attrs["data-pci"]]; twice {
				t.Errorf("device %s drawn twice", e.attrs["data-pci"])
			}
			drawn[e.attrs["data-pci"]] = e
		}
		if hasClass(e, "device-other") && e.attrs["data-node"] == "1" {
			others++
		}
	}
	for _, d := range snap.Topology.Devices {
		e, ok := drawn[d.Address]
		node, known := e.attrs["data-node"]
		switch {
		case d.Kind() == "other":
			if ok {
				t.Errorf("bridge %s listed, want it counted", d.Address)
			}
		case !ok:
			t.Errorf("device %s not drawn", d.Address)
		case d.NUMA < 0 && known:
			t.Errorf("device %s of unknown node drawn on node %s", d.Address, node)
		case d.NUMA >= 0 && node != strconv.Itoa(d.NUMA):
			t.Errorf("device %s drawn on node %q, want %d", d.Address, node, d.NUMA)
		}
	}
	if others != 1 {
		t.Errorf("%d lines counting node 1's other functions, want 1", others)
	}
}

// The map names the workloads holding each device beside it, from the
// agent's status.
func TestSVGNamesDeviceHolders(t *testing.T) {
	snap := machineOnly(fixture.GPUNIC)
	snap.Agent = true
	snap.Workloads = []Workload{{Name: "ns/trainer", Devices: []string{"0000:af:00.0"}}, {Name: "ns/infer", Devices: []string{"0000:af:00.0"}}}
	svg := string(SVG(snap))
	if !strings.Contains(svg, "0000:af:00.0 10de:20b5 held by ns/infer, ns/trainer") {
		t.Errorf("the GPU's line names no holders:\n%s", svg)
	}
	if strings.Contains(svg, "0000:18:00.0 8086:159b held by") {
		t.Error("the NIC no workload holds is drawn as held")
	}
}
