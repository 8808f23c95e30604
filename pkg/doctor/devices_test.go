package doctor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// deviceHost is a host whose sysfs is the shape's fixture tree, with edits
// (a path under sys and its new content) applied.
func deviceHost(t *testing.T, s fixture.Shape, edits ...string) Env {
	t.Helper()
	// One thread per socket: the devices are what is checked, and small
	// trees are quick to write.
	s.CoresPerSocket, s.ThreadsPerCore = 1, 1
	top := t.TempDir()
	if err := fixture.WriteSysfs(s, filepath.Join(top, "sys")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(edits); i += 2 {
		if err := os.WriteFile(filepath.Join(top, "sys", edits[i]), []byte(edits[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return envAt(top)
}

func TestDeviceNodesCheck(t *testing.T) {
	gpuNode := "devices/pci0000:af/0000:af:00.0/numa_node"
	oneNode := fixture.Small4
	oneNode.Devices = []fixture.Device{{Address: "0000:01:00.0", Class: fixture.Class3D, Vendor: fixture.VendorNVIDIA, Node: -1}}
	// Four devices of unknown node: the GPU is named before the bridges,
	// and past three the rest are counted.
	many := fixture.DeviceNodeUnknown
	many.Devices = append(many.Devices[:len(many.Devices):len(many.Devices)],
		fixture.Device{Address: "0000:00:00.0", Class: 0x060000, Node: -1},
		fixture.Device{Address: "0000:00:01.0", Class: 0x060400, Node: -1},
		fixture.Device{Address: "0000:00:02.0", Class: 0x060400, Node: -1})
	cases := []struct {
		name  string
		env   Env
		want  Status
		words []string
	}{
		{"every device on a node", deviceHost(t, fixture.GPUNIC), OK, []string{"3 PCI devices: node 0 2, node 1 1"}},
		{"a GPU of unknown node", deviceHost(t, fixture.DeviceNodeUnknown), Warn,
			[]string{"1 of 2 PCI devices report no NUMA node", "0000:af:00.0 gpu", "cannot align CPUs", "node 0 1, node 1 0, unknown node 1"}},
		{"a node the machine lacks", deviceHost(t, fixture.GPUNIC, gpuNode, "5\n"), Warn,
			[]string{"0000:af:00.0 gpu (numa_node 5, no node of this machine)"}},
		{"unknown on one node", deviceHost(t, oneNode), OK, []string{"1 PCI devices: node 0 0, unknown node 1"}},
		{"named first and counted", deviceHost(t, many), Warn,
			[]string{"4 of 5 PCI devices", "0000:af:00.0 gpu, 0000:00:00.0 other, 0000:00:01.0 other, and 1 more"}},
		{"broken attribute", deviceHost(t, fixture.GPUNIC, gpuNode, "x\n"), Warn, []string{`0000:af:00.0/numa_node: "x" is not -1`}},
		{"no PCI bus", hostV2().write(t), NA, []string{"bus/pci/devices"}},
	}
	check := Checks()[0]
	for _, c := range Checks() {
		if c.Name == "pci-device-nodes" {
			check = c
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runOne(check, c.env)
			if r.Check != "pci-device-nodes" || r.Status != c.want {
				t.Fatalf("got %s %s: %s (do: %s), want %s", r.Check, r.Status, r.Found, r.Do, c.want)
			}
			for _, w := range c.words {
				if !strings.Contains(r.Found+" "+r.Do, w) {
					t.Errorf("%q not in found %q / do %q", w, r.Found, r.Do)
				}
			}
		})
	}
}
