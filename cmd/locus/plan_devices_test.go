package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// TestPlanNearDevice: on the machine with a GPU on node 1 (CPUs 16-31,48-63)
// and a NIC on node 0, the CPUs go next to the device named, packing aside;
// when its node is full, to the other, and the plan says it is not aligned;
// a device whose node the firmware does not report is noted and left out.
func TestPlanNearDevice(t *testing.T) {
	gpuNIC := planTree(t, fixture.GPUNIC)
	unknown := planTree(t, fixture.DeviceNodeUnknown)
	aligned, unaligned := true, false
	for _, tc := range []struct {
		name    string
		args    []string
		cpuset  string
		near    []int
		aligned *bool
		notes   int
	}{
		{"no device: packing takes node 0", []string{"--sysfs-root", gpuNIC, "--cpus", "4"}, "0-1,32-33", nil, nil, 0},
		{"the GPU's node", []string{"--sysfs-root", gpuNIC, "--cpus", "4", "--near-device", "0000:af:00.0"},
			"16-17,48-49", []int{1}, &aligned, 0},
		{"the same device twice, without its domain", []string{"--sysfs-root", gpuNIC, "--cpus", "4",
			"--near-device", "AF:00.0", "--near-device", "0000:af:00.0"}, "16-17,48-49", []int{1}, &aligned, 0},
		{"the GPU's node full: the other, unaligned", []string{"--sysfs-root", gpuNIC, "--cpus", "4",
			"--near-device", "0000:af:00.0", "--allocated", "16-31,48-61"}, "0-1,32-33", []int{1}, &unaligned, 0},
		{"the NIC and the GPU: either node", []string{"--sysfs-root", gpuNIC, "--cpus", "40",
			"--near-device", "0000:af:00.0", "--near-device", "0000:18:00.0"}, "0-19,32-51", []int{0, 1}, &aligned, 0},
		{"a device of unknown node is noted and left out", []string{"--sysfs-root", unknown, "--cpus", "4",
			"--near-device", "0000:af:00.0"}, "0-1,32-33", nil, nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runPlan(t, append(tc.args, "-o", "json")...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var got planJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, out)
			}
			if got.CPUSet != tc.cpuset || !slices.Equal(got.Near, tc.near) || (got.Aligned == nil) != (tc.aligned == nil) ||
				got.Aligned != nil && *got.Aligned != *tc.aligned || len(got.Notes) != tc.notes {
				t.Fatalf("got %s", out)
			}
		})
	}
}

// The table says where the devices are and whether the CPUs are next to
// them; --topology reads the devices `locus topology -o json` writes.
func TestPlanNearDeviceTable(t *testing.T) {
	b, err := json.Marshal(fixture.MustBuild(fixture.GPUNIC))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "topology.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runPlan(t, "--topology", path, "--cpus", "4", "--near-device", "0000:af:00.0", "--allocated", "16-31,48-61")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"cpuset:      0-1,32-33 (4 CPUs)", "near:        1 (the devices' nodes)",
		"aligned:     no: the CPUs or memory did not fit on the devices' nodes"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	out, err = runPlan(t, "--sysfs-root", planTree(t, fixture.DeviceNodeUnknown), "--cpus", "2", "--near-device", "0000:af:00.0")
	if err != nil || !strings.Contains(out, "note:        device 0000:af:00.0: the firmware does not report its NUMA node (numa_node -1); placed without it") {
		t.Fatalf("%v\n%s", err, out)
	}
}
