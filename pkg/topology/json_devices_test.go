package topology_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// Devices in the exact form other tools parse: ids as sysfs and lspci print
// them, -1 for an unknown node, and no key at all on a machine without.
func TestJSONDevicesContract(t *testing.T) {
	b, err := json.Marshal(fixture.MustBuild(fixture.DeviceNodeUnknown))
	if err != nil {
		t.Fatal(err)
	}
	want := `"devices":[{"address":"0000:18:00.0","class":"0x020000","vendor":"0x8086","device":"0x159b","numa":0},` +
		`{"address":"0000:af:00.0","class":"0x030200","vendor":"0x10de","device":"0x20b5","numa":-1}]}`
	if !strings.HasSuffix(string(b), want) {
		t.Fatalf("got  %s\nwant it to end in %s", b, want)
	}
	if b, _ := json.Marshal(fixture.MustBuild(fixture.Small4)); strings.Contains(string(b), "devices") {
		t.Errorf("a machine without devices writes %s", b)
	}
}

// A device read back gets its node's CPUs as local (every CPU when the
// node is unknown), as discovery finds them on Linux.
func TestJSONDevicesLocalCPUs(t *testing.T) {
	var top topology.Topology
	if err := json.Unmarshal([]byte(js(t, fixture.MustBuild(fixture.DeviceNodeUnknown))), &top); err != nil {
		t.Fatal(err)
	}
	nic, _ := top.Device("0000:18:00.0")
	gpu, _ := top.Device("0000:af:00.0")
	if nic.LocalCPUs.String() != "0-15,32-47" || gpu.LocalCPUs.String() != "0-63" {
		t.Fatalf("local cpus: nic %s, gpu %s", nic.LocalCPUs, gpu.LocalCPUs)
	}
}

func TestJSONDevicesErrorsNameTheField(t *testing.T) {
	good := `{"cpus":[{"id":0,"core":0,"socket":0,"die":0,"numa":0,"l3":0}],` +
		`"numaNodes":[{"id":0,"cpus":"0","memoryTotalBytes":1,"memoryFreeBytes":1,"distances":[10]}],"isolated":"",` +
		`"devices":[{"address":"0000:18:00.0","class":"0x020000","vendor":"0x8086","device":"0x159b","numa":0},` +
		`{"address":"0000:af:00.0","class":"0x030200","vendor":"0x10de","device":"0x20b5","numa":-1}]}`
	many := make([]string, topology.MaxPCIDevices+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"address":"0000:%02x:%02x.%d","class":"0x020000","vendor":"0x8086","device":"0x159b","numa":0}`,
			i>>8, i>>3&0x1f, i&7)
	}
	cases := []struct{ name, old, new, want string }{
		{"address not canonical", `"0000:af:00.0"`, `"af:00.0"`, `devices[1].address: pci address "af:00.0"`},
		{"address upper case", `"0000:af:00.0"`, `"0000:AF:00.0"`, "devices[1].address"},
		{"unsorted", `"0000:af:00.0"`, `"0000:17:00.0"`, "devices[1].address: 0000:17:00.0 not sorted or duplicated"},
		{"duplicated", `"0000:af:00.0"`, `"0000:18:00.0"`, "devices[1].address: 0000:18:00.0 not sorted"},
		{"class not hex", `"0x030200"`, `"0x03020z"`, `devices[1].class: "0x03020z" is not 0x and 6 hex digits`},
		{"class a number", `"0x030200"`, `197120`, "devices.class"},
		{"vendor too long", `"0x10de"`, `"0x10de0"`, "devices[1].vendor"},
		{"device short", `"0x20b5"`, `"0xb5"`, "devices[1].device"},
		{"no such node", `"numa":-1`, `"numa":1`, "devices[1].numa: 1 is no node of the machine"},
		{"below unknown", `"numa":-1`, `"numa":-2`, "devices[1].numa: -2"},
		{"too many", `"devices":[`, `"devices":[` + strings.Join(many, ",") + `,`, "devices: 4099, more than 4096"},
	}
	var ok topology.Topology
	if err := json.Unmarshal([]byte(good), &ok); err != nil || len(ok.Devices) != 2 {
		t.Fatalf("baseline document: %d devices, %v", len(ok.Devices), err)
	}
	for _, c := range cases {
		refusesEdit(t, good, c.name, c.old, c.new, c.want)
	}
}
