package view

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// gpuHeld is the GPU-and-NIC machine with two workloads holding its GPU and
// one holding nothing.
func gpuHeld() *Snapshot {
	snap := machineOnly(fixture.GPUNIC)
	snap.Agent = true
	snap.Workloads = []Workload{{Name: "ns/trainer", Devices: []string{"0000:af:00.0"}}, {Name: "ns/web"},
		{Name: "ns/infer", Devices: []string{"0000:af:00.0"}}}
	return snap
}

// The table and the JSON of `locus topology` name the workloads holding a
// device beside it, as the map does, and nothing beside a device none holds.
func TestTopologyTextAndJSONNameDeviceHolders(t *testing.T) {
	var text bytes.Buffer
	if err := TopologyText(&text, gpuHeld()); err != nil {
		t.Fatal(err)
	}
	raw, err := TopologyJSON(gpuHeld())
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := json.Indent(&js, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		file string
		got  []byte
	}{{"2s-16c-ht-gpu-nic-held.txt", text.Bytes()}, {"2s-16c-ht-gpu-nic-held.json", append(js.Bytes(), '\n')}} {
		path := filepath.Join("testdata", g.file)
		if *update {
			if err := os.WriteFile(path, g.got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./pkg/view -run TestTopologyTextAndJSONNameDeviceHolders -update writes it)", err)
		}
		if !bytes.Equal(g.got, want) {
			t.Errorf("output differs from %s:\n%s", path, g.got)
		}
	}

	var decoded struct {
		Devices []struct {
			Address string   `json:"address"`
			HeldBy  []string `json:"heldBy"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	held := map[string][]string{}
	for _, d := range decoded.Devices {
		held[d.Address] = d.HeldBy
	}
	if want := map[string][]string{"0000:af:00.0": {"ns/infer", "ns/trainer"}, "0000:18:00.0": nil, "0000:5e:00.0": nil}; !reflect.DeepEqual(held, want) {
		t.Errorf("heldBy by device %v, want %v", held, want)
	}
	if !bytes.Contains(text.Bytes(), []byte("0000:af:00.0  gpu  10de:20b5  class 030200  held by ns/infer, ns/trainer\n")) ||
		bytes.Contains(text.Bytes(), []byte("159b  class 020000  held")) {
		t.Errorf("the table names the wrong holders:\n%s", text.Bytes())
	}

	// The JSON still reads back as the machine alone.
	var back topology.Topology
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if want := fixture.MustBuild(fixture.GPUNIC); !reflect.DeepEqual(back.Devices, want.Devices) {
		t.Errorf("devices read back %+v, want %+v", back.Devices, want.Devices)
	}
}

// Without an agent's workloads, the table and the JSON are the machine's.
func TestTopologyTextWithoutHoldersIsTheMachines(t *testing.T) {
	snap := machineOnly(fixture.GPUNIC)
	var got, want bytes.Buffer
	if err := TopologyText(&got, snap); err != nil {
		t.Fatal(err)
	}
	if err := topology.RenderTable(&want, snap.Topology); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("table without holders:\n%s\nwant:\n%s", got.Bytes(), want.Bytes())
	}
	raw, err := TopologyJSON(snap)
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := json.Marshal(snap.Topology); !bytes.Equal(raw, plain) {
		t.Errorf("JSON without holders differs from the machine's:\n%s\n%s", raw, plain)
	}
}
