package nrt

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

const gib = int64(1) << 30

func TestBuild(t *testing.T) {
	topo := fixture.MustBuild(fixture.MemoryOnly) // node 0: CPUs 0-15, node 1: 16-31, node 2: memory only
	in := Input{Node: "n1", Topology: topo, Reserved: cpuset.New(0, 1),
		Assignments: map[string]workload.Assignment{
			"ns/a":     {CPUs: cpuset.New(2, 3, 4, 5), Policy: cpualloc.FullPCPUs},
			"ns/burst": {CPUs: cpuset.New(20, 21, 22, 23), Policy: cpualloc.StaticBurst, RequestMilli: 1000},
			"ns/wide":  {CPUs: cpuset.New(14, 15, 16, 17), Policy: cpualloc.DistributeAcrossNUMA},
		},
		Memory: map[string]cpualloc.Memory{"ns/a": {Bytes: 4 << 30}, "ns/wide": {Bytes: 2 << 30}, "ns/burst": {Bytes: 1 << 30}, "ns/none": {Bytes: 8 << 30}},
	}
	obj, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if obj.APIVersion != "topology.node.k8s.io/v1alpha2" || obj.Kind != "NodeResourceTopology" || obj.Metadata.Name != "n1" {
		t.Fatalf("header %s %s %s", obj.APIVersion, obj.Kind, obj.Metadata.Name)
	}
	if len(obj.Zones) != 3 {
		t.Fatalf("%d zones, want 3", len(obj.Zones))
	}
	type want struct {
		name     string
		costs    []int64
		cpus     string
		cpu      [3]int64 // capacity, allocatable, available
		memAvail int64
		hasCPU   bool
	}
	mem := int64(topo.Nodes[0].MemoryTotal)
	wants := []want{
		// 16 CPUs, 2 reserved, a holds 4 and wide 2; a's 4 GiB and all of
		// wide's 2 GiB: node 0, its first node, holds it (cpualloc.Hold).
		{"node-0", []int64{10, 21, 21}, "0-15", [3]int64{16, 14, 8}, mem - 6*gib, true},
		// burst CPUs stay available; burst's 1 GiB.
		{"node-1", []int64{21, 10, 21}, "16-31", [3]int64{16, 16, 14}, mem - gib, true},
		{"node-2", []int64{21, 21, 10}, "", [3]int64{}, int64(topo.Nodes[2].MemoryTotal), false},
	}
	for i, w := range wants {
		z := obj.Zones[i]
		if z.Name != w.name || z.Type != "Node" {
			t.Fatalf("zone %d = %s/%s, want %s/Node", i, z.Name, z.Type, w.name)
		}
		for j, c := range z.Costs {
			if c.Name != wants[j].name || c.Value != w.costs[j] {
				t.Errorf("%s: cost %d = %+v, want %s %d", z.Name, j, c, wants[j].name, w.costs[j])
			}
		}
		res := map[string]Resource{}
		for _, r := range z.Resources {
			res[r.Name] = r
		}
		if cpu, ok := res["cpu"]; ok != w.hasCPU ||
			ok && (cpu.Capacity.Value() != w.cpu[0] || cpu.Allocatable.Value() != w.cpu[1] || cpu.Available.Value() != w.cpu[2]) {
			t.Errorf("%s: cpu = %+v (present %v), want %v", z.Name, cpu, ok, w.cpu)
		}
		if w.hasCPU && (len(z.Attributes) != 1 || z.Attributes[0] != Attribute{"cpus", w.cpus}) {
			t.Errorf("%s: attributes %v, want cpus=%s", z.Name, z.Attributes, w.cpus)
		}
		m := res["memory"]
		if m.Capacity.Value() != m.Allocatable.Value() || m.Available.Value() != w.memAvail {
			t.Errorf("%s: memory %s/%s/%s, want available %d", z.Name, m.Capacity.String(), m.Allocatable.String(), m.Available.String(), w.memAvail)
		}
	}

	ct, err := ReadCPUTopology(obj.Metadata.Annotations[AnnotationCPUTopology])
	if err != nil {
		t.Fatal(err)
	}
	if len(ct.CPUs) != 32 || ct.CPUs[17].NUMA != 1 || ct.CPUs[17].Core != topo.CPUs[17].Core || ct.Reserved != "0-1" {
		t.Fatalf("cpu detail: %d cpus, cpu 17 = %+v, reserved %q", len(ct.CPUs), ct.CPUs[17], ct.Reserved)
	}
	if ct.Exclusive["ns/a"] != "2-5" || ct.Exclusive["ns/wide"] != "14-17" || len(ct.Exclusive) != 2 {
		t.Fatalf("exclusive = %v", ct.Exclusive)
	}
	if b := ct.StaticBurst["ns/burst"]; b.CPUs != "20-23" || b.RequestMilli != 1000 || ct.BurstMilli["20"] != 250 || len(ct.BurstMilli) != 4 {
		t.Fatalf("static burst = %v, loads %v", ct.StaticBurst, ct.BurstMilli)
	}

	// Equal inputs, equal bytes: the publisher compares JSON.
	again, _ := Build(in)
	a, _ := json.Marshal(obj)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Fatal("two builds of one input differ")
	}
}

// The kubelet's CPUs are published and are not available.
func TestBuildKubeletCPUs(t *testing.T) {
	topo := fixture.MustBuild(fixture.MemoryOnly)
	obj, err := Build(Input{Node: "n1", Topology: topo, Reserved: cpuset.New(0, 1), Kubelet: cpuset.New(2, 3, 16),
		Assignments: map[string]workload.Assignment{"ns/a": {CPUs: cpuset.New(4, 5), Policy: cpualloc.FullPCPUs}}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][2]int64{{14, 10}, {16, 15}} {
		cpu := obj.Zones[i].Resources[0]
		if cpu.Name != "cpu" || cpu.Allocatable.Value() != want[0] || cpu.Available.Value() != want[1] {
			t.Errorf("zone %d: %+v, want allocatable %d available %d", i, cpu, want[0], want[1])
		}
	}
	ct, err := ReadCPUTopology(obj.Metadata.Annotations[AnnotationCPUTopology])
	if err != nil || ct.Kubelet != "2-3,16" {
		t.Fatalf("kubelet %q, %v", ct.Kubelet, err)
	}
}

func TestBuildNoTopology(t *testing.T) {
	if _, err := Build(Input{Node: "n"}); err == nil {
		t.Fatal("no error without a topology")
	}
}

// A container-scope pod's parts are listed under containers; a pod without
// parts, or parts of a pod holding no CPUs, are not; with no parts at all
// the key is absent, so the report is what it was before the key existed.
func TestBuildContainerParts(t *testing.T) {
	topo := fixture.MustBuild(fixture.MemoryOnly)
	held := map[string]workload.Assignment{
		"ns/split": {CPUs: cpuset.New(2, 3, 4, 5), Policy: cpualloc.FullPCPUs},
		"ns/whole": {CPUs: cpuset.New(6, 7), Policy: cpualloc.FullPCPUs},
	}
	for _, tc := range []struct {
		name  string
		parts map[string]map[string]string
		want  map[string]map[string]string
	}{
		{"no parts", nil, nil},
		{"empty parts", map[string]map[string]string{"ns/whole": {}}, nil},
		{"a container-scope pod", map[string]map[string]string{"ns/split": {"log": "2", "web": "3-5"}},
			map[string]map[string]string{"ns/split": {"log": "2", "web": "3-5"}}},
		{"a pod holding no CPUs", map[string]map[string]string{"ns/split": {"web": "2-5"}, "ns/gone": {"web": "8"}},
			map[string]map[string]string{"ns/split": {"web": "2-5"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Node: "n1", Topology: topo, Reserved: cpuset.New(0, 1), Assignments: held, ContainerCPUs: tc.parts}
			obj, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			raw := obj.Metadata.Annotations[AnnotationCPUTopology]
			ct, err := ReadCPUTopology(raw)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ct.Containers, tc.want) {
				t.Errorf("containers = %v, want %v", ct.Containers, tc.want)
			}
			if ct.Exclusive["ns/split"] != "2-5" || ct.Exclusive["ns/whole"] != "6-7" || len(ct.Exclusive) != 2 {
				t.Errorf("exclusive = %v", ct.Exclusive)
			}
			if tc.want == nil {
				plain, err := Build(Input{Node: "n1", Topology: topo, Reserved: cpuset.New(0, 1), Assignments: held})
				if err != nil {
					t.Fatal(err)
				}
				if got := plain.Metadata.Annotations[AnnotationCPUTopology]; got != raw || strings.Contains(raw, `"containers"`) {
					t.Errorf("without parts the annotation is\n%s\nwant\n%s", raw, got)
				}
			}
			again, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(obj)
			b, _ := json.Marshal(again)
			if string(a) != string(b) {
				t.Fatal("two builds of one input differ")
			}
		})
	}
}
