package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// A HostConfig workload's CPUs are placed next to the devices it names, end
// to end on a fixture sysfs tree with a GPU on node 1 (CPUs 16-31,48-63):
// the first workload holding it lands on node 1 though packing alone would
// take node 0; the second no longer fits there, lands on node 0 and is told
// as DeviceNotAligned, naming the device and the nodes.
func TestStandaloneDevices(t *testing.T) {
	sys := filepath.Join(t.TempDir(), "sys")
	if err := fixture.WriteSysfs(fixture.GPUNIC, sys); err != nil {
		t.Fatal(err)
	}
	cg := v2Tree(t, "pods/a-train")
	copyDir(t, filepath.Join(cg, "pods/a-train"), filepath.Join(cg, "pods/b-infer"))
	dir := t.TempDir()
	cfg, state := filepath.Join(dir, "host.yaml"), filepath.Join(dir, "state")
	doc := `apiVersion: locus.io/v1alpha1
kind: HostConfig
workloads:
- name: a-train
  cgroup: pods/a-train
  resources: {limits: {cpu: "30"}}
  annotations: {cpuset-scheduler: "true"}
  devices: ["0000:af:00.0"]
- name: b-infer
  cgroup: pods/b-infer
  resources: {limits: {cpu: "4"}}
  annotations: {cpuset-scheduler: "true"}
  devices: ["AF:00.0"]
`
	byName := agentOnceStatus(t, cfg, doc, state, sys, cg)
	for name, want := range map[string][2]string{"a-train": {"16-30,48-62", "1"}, "b-infer": {"0-1,32-33", "0"}} {
		cpus, _ := os.ReadFile(filepath.Join(cg, "pods", name, "cpuset.cpus"))
		mems, _ := os.ReadFile(filepath.Join(cg, "pods", name, "cpuset.mems"))
		if strings.TrimSpace(string(cpus)) != want[0] || strings.TrimSpace(string(mems)) != want[1] {
			t.Errorf("%s: cpuset.cpus %q, cpuset.mems %q, want %s on node %s", name, cpus, mems, want[0], want[1])
		}
	}
	if p := byName["a-train"].Problems; len(p) != 0 {
		t.Errorf("a-train told %v", p)
	}
	if p := byName["b-infer"].Problems; len(p) != 1 || !strings.HasPrefix(p[0], "DeviceNotAligned: devices 0000:af:00.0 are on NUMA nodes [1], but its CPUs 0-1,32-33 are on NUMA nodes [0]") {
		t.Errorf("b-infer told %v", p)
	}
	evs, _ := runLocus(t, "events", "--state-dir", state, "--workload", "b-infer")
	if !strings.Contains(evs, "DeviceNotAligned") || !strings.Contains(evs, "0000:af:00.0") {
		t.Errorf("no DeviceNotAligned Warning for b-infer:\n%s", evs)
	}
}
