package kubelet

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"
)

// The fixtures under testdata/checkpoints are written by the kubelet's own
// state packages (bench/kubeletstate; the bench module checks they still
// are), so these tests read what a real kubelet writes.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "checkpoints", name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestParseCPUManagerFixtures(t *testing.T) {
	const podA, podB = "2b1f3a9c-8d4e-4f6a-9b7c-1d2e3f4a5b6c", "0f9e8d7c-6b5a-4c3d-2e1f-0a9b8c7d6e5f"
	for _, tc := range []struct {
		name, policy, def, exclusive string
		version                      int
		assignments                  map[string]map[string]cpuset.CPUSet
		byID                         map[string]cpuset.CPUSet
	}{
		{name: "cpu_none", policy: "none", def: "", exclusive: "", version: 2, assignments: map[string]map[string]cpuset.CPUSet{}},
		{name: "cpu_static_empty", policy: "static", def: "0-7", exclusive: "", version: 2, assignments: map[string]map[string]cpuset.CPUSet{}},
		{name: "cpu_static", policy: "static", def: "0-1,6-9,14-15", exclusive: "2-5,10-13", version: 2,
			assignments: map[string]map[string]cpuset.CPUSet{
				podA: {"app": cpuset.New(2, 3, 10, 11), "B-side": cpuset.New(4)},
				podB: {"db": cpuset.New(5, 12, 13)},
			}},
		{name: "cpu_v1", policy: "static", def: "0-1,4-7", exclusive: "2-3", version: 1,
			byID: map[string]cpuset.CPUSet{"4f2c9a0d5e8b7c6a1f3e2d4c5b6a79880f1e2d3c4b5a69788796a5b4c3d2e1f0": cpuset.New(2, 3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseCPUManager(fixture(t, tc.name))
			if err != nil {
				t.Fatal(err)
			}
			if c.Policy != tc.policy || c.Default.String() != tc.def || c.Exclusive().String() != tc.exclusive || c.Version != tc.version {
				t.Fatalf("got policy %q default %q exclusive %q version %d", c.Policy, c.Default, c.Exclusive(), c.Version)
			}
			if tc.version == 2 && !reflect.DeepEqual(c.Assignments, tc.assignments) {
				t.Fatalf("assignments %v, want %v", c.Assignments, tc.assignments)
			}
			if tc.version == 1 && !reflect.DeepEqual(c.ByContainerID, tc.byID) {
				t.Fatalf("by container ID %v, want %v", c.ByContainerID, tc.byID)
			}
		})
	}
}

func TestParseMemoryManagerFixtures(t *testing.T) {
	m, err := ParseMemoryManager(fixture(t, "memory_static"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string][]Block{"2b1f3a9c-8d4e-4f6a-9b7c-1d2e3f4a5b6c": {"app": {
		{Resource: "memory", Bytes: 2147483648, Nodes: []int{0}}, {Resource: "hugepages-1Gi", Bytes: 1073741824, Nodes: []int{0}}}}}
	if m.Policy != "Static" || !reflect.DeepEqual(m.Nodes, []int{0, 1}) || !reflect.DeepEqual(m.Assignments, want) {
		t.Fatalf("got %+v", m)
	}
	// The reserve the kubelet keeps on each node, where it keeps one.
	if !reflect.DeepEqual(m.SystemReserved, map[int]uint64{0: 1 << 30}) {
		t.Fatalf("systemReserved %v, want 1Gi on node 0", m.SystemReserved)
	}
	if want := map[int]map[string]uint64{0: {"memory": 2 << 30, "hugepages-1Gi": 1 << 30}}; !reflect.DeepEqual(m.Assigned, want) {
		t.Fatalf("assigned %v, want %v", m.Assigned, want)
	}
	for _, name := range []string{"memory_none", "memory_nils"} {
		if _, err := ParseMemoryManager(fixture(t, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A checkpoint changed after the kubelet wrote it fails its checksum, as
// it does for the kubelet; only a zero checksum goes unchecked, and only in
// the CPU manager's checkpoint.
func TestChecksumRefusesChanges(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		cpu            bool
		wantErr        string
	}{
		{"cpu_static", `"db":"5,12-13"`, `"db":"5,12-14"`, true, "checksum"},
		{"cpu_static", `"static"`, `"none"`, true, "checksum"},
		{"cpu_static", `"B-side"`, `"b-side"`, true, "checksum"},
		{"cpu_static", `"checksum":3990796714`, `"checksum":0`, true, ""},
		{"cpu_v1", `"2-3"`, `"2-4"`, true, "checksum"},
		{"cpu_none", `"checksum":1353318690`, `"checksum":1353318691`, true, "checksum"},
		{"memory_static", `"size":2147483648`, `"size":2147483647`, false, "checksum"},
		{"memory_static", `"cells":[1]`, `"cells":[1,0]`, false, "checksum"},
		{"memory_static", `"checksum":433484132`, `"checksum":0`, false, "checksum"},
		{"memory_nils", `"cells":null`, `"cells":[]`, false, "checksum"},
	} {
		raw := string(fixture(t, tc.name))
		if !strings.Contains(raw, tc.from) {
			t.Fatalf("%s has no %s", tc.name, tc.from)
		}
		changed := []byte(strings.Replace(raw, tc.from, tc.to, 1))
		var err error
		if tc.cpu {
			_, err = ParseCPUManager(changed)
		} else {
			_, err = ParseMemoryManager(changed)
		}
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s with %s: error %v, want %q", tc.name, tc.to, err, tc.wantErr)
		}
	}
}

// Bad lists and sizes are refused naming the field, after the checksum (a
// zero checksum lets a hand-written file reach the lists).
func TestParseCPUManagerBadInput(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"policyName":"static","defaultCpuSet":"0-9223372036854775807","checksum":0}`, "defaultCpuSet"},
		{`{"policyName":"static","defaultCpuSet":"0","entries":{"u":{"c":"x"}},"checksum":0}`, `entries["u"]["c"]`},
		{`{"policyName":"static","defaultCpuSet":"0","entries":{"":{"c":"1"}},"checksum":0}`, `entries[""]`},
		{`{"policyName":"static","defaultCpuSet":"0","entries":{"id":"9000"},"checksum":0}`, `entries["id"]`},
		{`[[[[[[]]]]]]`, "nested"},
		{`{"policyName":1}`, "not a CPU manager checkpoint"},
		{strings.Repeat(" ", MaxFileBytes+1), "bytes"},
	} {
		_, err := ParseCPUManager([]byte(tc.raw))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: error %v, want one naming %q", tc.raw, err, tc.want)
		}
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cpuManagerPolicy: static
reservedSystemCPUs: "0,8"
topologyManagerPolicy: single-numa-node
topologyManagerScope: pod
memoryManagerPolicy: Static
cgroupDriver: systemd
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.CPUManagerPolicy != "static" || c.ReservedSystemCPUs.String() != "0,8" || c.TopologyManagerPolicy != "single-numa-node" ||
		c.TopologyManagerScope != "pod" || c.MemoryManagerPolicy != "Static" || c.CgroupDriver != "systemd" {
		t.Fatalf("got %+v", c)
	}
	d, err := ParseConfig([]byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"))
	if err != nil || d.CPUManagerPolicy != "none" || d.TopologyManagerPolicy != "none" || d.TopologyManagerScope != "container" ||
		d.MemoryManagerPolicy != "None" || d.CgroupDriver != "cgroupfs" || !d.ReservedSystemCPUs.IsEmpty() {
		t.Fatalf("defaults: %+v, %v", d, err)
	}
	for _, tc := range []struct{ raw, want string }{
		{"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: Static\n", "cpuManagerPolicy"},
		{"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nreservedSystemCPUs: 0-99999\n", "reservedSystemCPUs"},
		{"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ntopologyManagerScope: node\n", "topologyManagerScope"},
		{"apiVersion: v1\nkind: ConfigMap\n", "KubeletConfiguration"},
		{"{", "not a KubeletConfiguration"},
	} {
		if _, err := ParseConfig([]byte(tc.raw)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one naming %q", tc.raw, err, tc.want)
		}
	}
}

// Read reads a kubelet directory as it is: missing files are no error, bad
// ones are named with their reason, and an unreadable CPU manager checkpoint
// says so (CPUUnknown), so that every CPU is then taken as the kubelet's.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	if s := Read(Paths{Dir: dir}); s.CPU != nil || s.Memory != nil || s.Config != nil || len(s.Errors) > 0 || s.CPUUnknown {
		t.Fatalf("empty dir: %+v", s)
	}
	// A configuration file named on purpose must be there.
	if s := Read(Paths{Dir: dir, Config: filepath.Join(dir, "kubelet.yaml")}); len(s.Errors) != 1 || s.CPUUnknown ||
		!strings.Contains(s.Errors[0].String(), "kubelet.yaml: does not exist") {
		t.Fatalf("missing --kubelet-config: %+v", s)
	}
	write := func(name string, raw []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(CPUManagerFile, fixture(t, "cpu_static"))
	write(MemoryManagerFile, fixture(t, "memory_static"))
	write(ConfigFile, []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: static\nreservedSystemCPUs: 0\n"))
	before := Stamp(Paths{Dir: dir})
	s := Read(Paths{Dir: dir})
	if len(s.Errors) > 0 || s.CPU == nil || s.Memory == nil || s.Config == nil {
		t.Fatalf("got %+v", s)
	}
	sum := s.Summary()
	if sum.CPUManagerPolicy != "static" || sum.ExclusiveCPUs != "2-5,10-13" || sum.ReservedCPUs != "0" ||
		sum.Exclusive["0f9e8d7c-6b5a-4c3d-2e1f-0a9b8c7d6e5f/db"] != "5,12-13" || sum.MemoryManagerPolicy != "Static" {
		t.Fatalf("summary %+v", sum)
	}
	write(CPUManagerFile, []byte(strings.Replace(string(fixture(t, "cpu_static")), "5,12-13", "5,12-14", 1)))
	if Stamp(Paths{Dir: dir}) == before {
		t.Fatal("stamp did not change with the checkpoint")
	}
	s = Read(Paths{Dir: dir})
	if !s.CPUUnknown || s.CPU != nil || len(s.Errors) != 1 || !strings.Contains(s.Errors[0].String(), CPUManagerFile+": checksum") {
		t.Fatalf("corrupt checkpoint: %+v", s)
	}
}
