package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/view"
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

// Asked on this machine, `locus topology` names beside each device the
// workloads the running agent says hold it, in the table and the JSON; the
// agent's snapshot is served here by a stand-in.
func TestTopologyNamesDeviceHoldersFromTheAgent(t *testing.T) {
	snap := view.Snapshot{Agent: true, Topology: fixture.MustBuild(fixture.GPUNIC),
		Workloads: []view.Workload{{Name: "ns/trainer", Devices: []string{"0000:af:00.0"}}, {Name: "ns/web"}}}
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ui/snapshot.json" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(snap)
	}))
	defer agent.Close()
	addr := strings.TrimPrefix(agent.URL, "http://")

	table, err := runLocus(t, "topology", "--agent-addr", addr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, "0000:af:00.0  gpu  10de:20b5  class 030200  held by ns/trainer\n") || strings.Count(table, "held by") != 1 {
		t.Errorf("the table does not name the GPU's holder alone:\n%s", table)
	}
	out, err := runLocus(t, "topology", "-o", "json", "--agent-addr", addr)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Devices []struct {
			Address string   `json:"address"`
			HeldBy  []string `json:"heldBy"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	held := map[string][]string{}
	for _, d := range got.Devices {
		if d.HeldBy != nil {
			held[d.Address] = d.HeldBy
		}
	}
	if want := map[string][]string{"0000:af:00.0": {"ns/trainer"}}; !reflect.DeepEqual(held, want) {
		t.Errorf("heldBy %v, want %v", held, want)
	}

	// A fixture machine is another one: no agent is asked about it.
	table, err = runLocus(t, "topology", "--sysfs-root", fixtureTree(t, fixture.GPUNIC.Name), "--agent-addr", addr)
	if err != nil || strings.Contains(table, "held by") {
		t.Errorf("--sysfs-root named holders (%v):\n%s", err, table)
	}
}
