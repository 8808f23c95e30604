package nrt

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// Each zone lists the devices on its node, bridges aside; a device of
// unknown node is on no zone, and a zone without devices has no attribute.
func TestBuildListsDevicesPerZone(t *testing.T) {
	s := fixture.DeviceNodeUnknown // NIC on node 0, GPU of unknown node
	s.Devices = append(s.Devices[:len(s.Devices):len(s.Devices)],
		fixture.Device{Address: "0000:17:00.0", Class: 0x060400, Node: 0}, // a root port
		fixture.Device{Address: "0000:16:00.4", Class: 0x088000, Node: 0}, // a system peripheral
		fixture.Device{Address: "0000:3b:00.0", Class: fixture.ClassEthernet, Node: 0},
		fixture.Device{Address: "0000:d8:00.0", Class: 0x120000, Node: 1})
	obj, err := Build(Input{Node: "n", Topology: fixture.MustBuild(s)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"node-0": "0000:18:00.0,0000:3b:00.0", "node-1": "0000:d8:00.0"}
	for _, z := range obj.Zones {
		var got []string
		for _, a := range z.Attributes {
			if a.Name == AttributePCIDevices {
				got = append(got, a.Value)
			}
		}
		if len(got) != 1 || got[0] != want[z.Name] {
			t.Errorf("zone %s: %s %q, want %q", z.Name, AttributePCIDevices, got, want[z.Name])
		}
		addrs, more, err := ReadPCIDevices(z)
		if err != nil || strings.Join(addrs, ",") != want[z.Name] || more != 0 {
			t.Errorf("zone %s read back: %q, %d more, %v", z.Name, addrs, more, err)
		}
	}
	plain, err := Build(Input{Node: "n", Topology: fixture.MustBuild(fixture.MemoryOnly)})
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range plain.Zones {
		if addrs, _, _ := ReadPCIDevices(z); len(z.Attributes) > 1 || addrs != nil {
			t.Errorf("zone %s of a machine without devices: %+v", z.Name, z.Attributes)
		}
	}
}

// A node of more devices than fit lists those that do, then how many are
// left out, within the bound.
func TestPCIDevicesValueIsBounded(t *testing.T) {
	for _, n := range []int{1, 2, 100, 629, 630, 631, 4096} {
		addrs := make([]string, n)
		for i := range addrs {
			addrs[i] = fmt.Sprintf("0000:%02x:%02x.%d", i>>8, i>>3&0x1f, i&7)
		}
		value := joinBounded(addrs, MaxPCIDevicesValue)
		got, more, err := ReadPCIDevices(Zone{Name: "node-0", Attributes: []Attribute{{Name: AttributePCIDevices, Value: value}}})
		if err != nil || len(value) > MaxPCIDevicesValue || len(got)+more != n || !reflect.DeepEqual(got, addrs[:len(got)]) {
			t.Errorf("%d devices: %d bytes, %d listed and %d more, %v", n, len(value), len(got), more, err)
		}
		if fits := (MaxPCIDevicesValue + 1) / 13; (more == 0) != (n <= fits) {
			t.Errorf("%d devices: %d left out, want none only up to %d", n, more, fits)
		}
	}
}

func TestReadPCIDevicesErrorsNameTheZone(t *testing.T) {
	for value, want := range map[string]string{
		"0000:18:00.0,18:00.1":               `pci address "18:00.1"`,
		"0000:18:00.1,0000:18:00.0":          "0000:18:00.0 not in increasing order",
		"0000:18:00.0,0000:18:00.0":          "not in increasing order",
		"0000:18:00.0,+0":                    `"+0" is not +1 to +4096`,
		"0000:18:00.0,+x":                    `"+x"`,
		"+1,0000:18:00.0":                    `pci address "+1"`,
		strings.Repeat("0000:18:00.0,", 700): "bytes, more than 8192",
	} {
		_, _, err := ReadPCIDevices(Zone{Name: "node-1", Attributes: []Attribute{{Name: AttributePCIDevices, Value: value}}})
		if err == nil || !strings.Contains(err.Error(), `zone "node-1": attribute locus.io/pci-devices`) || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: error %v, want one naming the zone and %q", value, err, want)
		}
	}
}

// The attribute is written by a node's agent and read by the scheduler:
// whatever it holds, reading is bounded and what is read is canonical.
func FuzzReadPCIDevices(f *testing.F) {
	f.Add("0000:18:00.0,0000:af:00.0,+3")
	f.Add("+1")
	f.Add("0000:18:00.0,")
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, value string) {
		var addrs []string
		var more int
		var err error
		fuzzseed.Timed(t, "ReadPCIDevices", func() {
			addrs, more, err = ReadPCIDevices(Zone{Name: "node-0", Attributes: []Attribute{{Name: AttributePCIDevices, Value: value}}})
		})
		fuzzseed.CheckError(t, err, AttributePCIDevices)
		if err != nil {
			return
		}
		for i, a := range addrs {
			if topology.CheckPCIAddress(a) != nil || i > 0 && a <= addrs[i-1] {
				t.Fatalf("read %q from %.100q", addrs, value)
			}
		}
		if more < 0 || more > topology.MaxPCIDevices {
			t.Fatalf("%d more from %.100q", more, value)
		}
	})
}
