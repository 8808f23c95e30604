package nrt

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/locus-project/locus/pkg/podresources"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// Each zone lists, per device-plugin resource, the devices on its node and
// how many are free; a device on two nodes counts on both, one without
// topology on none, one reported twice once.
func TestBuildListsPluginDevicesPerZone(t *testing.T) {
	gpu := func(id string, nodes ...int) podresources.Device {
		return podresources.Device{Resource: "example.com/gpu", IDs: []string{id}, Nodes: nodes}
	}
	in := Input{Node: "n", Topology: fixture.MustBuild(fixture.DeviceNodeUnknown),
		Allocatable: []podresources.Device{gpu("g0", 0), gpu("g1", 1), gpu("g2", 1), gpu("g2", 1), gpu("both", 0, 1), gpu("nowhere"),
			{Resource: "example.com/nic", IDs: []string{"n0", "n1"}, Nodes: []int{0}}},
		InUse: []podresources.Device{{Resource: "example.com/gpu", IDs: []string{"g1", "both"}, Nodes: []int{1}}}}
	obj, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, z := range obj.Zones {
		for _, r := range z.Resources {
			if r.Name == "example.com/gpu" || r.Name == "example.com/nic" {
				got[z.Name] = append(got[z.Name], fmt.Sprintf("%s %s/%s/%s", r.Name, r.Capacity.String(), r.Allocatable.String(), r.Available.String()))
			}
		}
	}
	want := map[string][]string{
		"node-0": {"example.com/gpu 2/2/1", "example.com/nic 2/2/2"},
		"node-1": {"example.com/gpu 3/3/1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("zones' device resources %v, want %v", got, want)
	}
}

// Past MaxDeviceResources resources, a zone lists the first by name.
func TestPluginDeviceResourcesBounded(t *testing.T) {
	var devs []podresources.Device
	for i := range MaxDeviceResources + 5 {
		devs = append(devs, podresources.Device{Resource: fmt.Sprintf("example.com/r%03d", i), IDs: []string{"a"}, Nodes: []int{0}})
	}
	rs := deviceResources(pluginDevices(devs, nil)[0])
	if len(rs) != MaxDeviceResources || rs[0].Name != "example.com/r000" {
		t.Fatalf("%d resources listed, first %s", len(rs), rs[0].Name)
	}
}
