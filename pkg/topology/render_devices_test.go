package topology_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

func TestPCIDeviceKind(t *testing.T) {
	for class, want := range map[uint32]string{
		0x030000: "gpu", 0x030200: "gpu", 0x038000: "other", 0x020000: "nic", 0x020700: "nic",
		0x010802: "nvme", 0x010700: "other", 0x120000: "accelerator", 0x060400: "other", 0: "other",
	} {
		if got := (topology.PCIDevice{Class: class}).Kind(); got != want {
			t.Errorf("class %06x: kind %q, want %q", class, got, want)
		}
	}
}

// Bridges and the like are counted under their node, not listed one by one.
func TestRenderTableCountsOtherDevices(t *testing.T) {
	s := fixture.GPUNIC
	s.Devices = append(s.Devices[:len(s.Devices):len(s.Devices)],
		fixture.Device{Address: "0000:00:00.0", Class: 0x060000, Vendor: fixture.VendorIntel, Device: 0x09a2, Node: 0},
		fixture.Device{Address: "0000:00:1f.0", Class: 0x060100, Vendor: fixture.VendorIntel, Device: 0xa1c8, Node: 0},
		fixture.Device{Address: "0000:80:00.0", Class: 0x060000, Vendor: fixture.VendorIntel, Device: 0x09a2, Node: -1})
	var buf bytes.Buffer
	if err := topology.RenderTable(&buf, fixture.MustBuild(s)); err != nil {
		t.Fatal(err)
	}
	_, devices, _ := strings.Cut(buf.String(), "node 0 devices:")
	want := `
  0000:18:00.0  nic  8086:159b  class 020000
  0000:5e:00.0  nvme  144d:a80a  class 010802
  2 other functions
node 1 devices:
  0000:af:00.0  gpu  10de:20b5  class 030200
devices of unknown node (numa_node -1: CPUs cannot be placed near them):
  1 other function
`
	if strings.Join(strings.Fields(devices), " ") != strings.Join(strings.Fields(want), " ") {
		t.Fatalf("devices section:\n%s\nwant (spacing aside):%s", devices, want)
	}
}

// On a machine of one node, a device of unknown node is near every CPU,
// and the table says so rather than warning.
func TestRenderTableUnknownNodeOnOneNode(t *testing.T) {
	s := fixture.Small4
	s.Devices = []fixture.Device{{Address: "0000:00:03.0", Class: fixture.ClassEthernet, Vendor: 0x1af4, Device: 0x1041, Node: -1}}
	var buf bytes.Buffer
	if err := topology.RenderTable(&buf, fixture.MustBuild(s)); err != nil {
		t.Fatal(err)
	}
	if want := "devices of unknown node (numa_node -1; one node: every CPU is near them):\n  0000:00:03.0  nic"; !strings.Contains(buf.String(), want) {
		t.Fatalf("table lacks %q:\n%s", want, buf.String())
	}
}
