package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// A fixture's devices come out of `locus topology` in the table under their
// node and in the JSON that --topology loads back, unknown node and all.
func TestTopologyShowsDevices(t *testing.T) {
	dir := fixtureTree(t, fixture.DeviceNodeUnknown.Name)
	table, err := runLocus(t, "topology", "--sysfs-root", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"node 0 devices:\n  0000:18:00.0  nic", "devices of unknown node", "0000:af:00.0  gpu  10de:20b5"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	got := topologyLoadedBack(t, dir)
	if want := fixture.MustBuild(fixture.DeviceNodeUnknown); !reflect.DeepEqual(got.Devices, want.Devices) {
		t.Fatalf("loaded devices %+v\nwant %+v", got.Devices, want.Devices)
	}
}
