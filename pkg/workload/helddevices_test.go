package workload

import (
	"reflect"
	"strings"
	"testing"
)

func TestHeldDevices(t *testing.T) {
	got, err := HeldDevices("devices", []ReportedDevice{{Resource: "r/b", ID: "1", Nodes: []int{1, 0, 1}},
		{Resource: "r/a", ID: "x"}, {Resource: "r/b", ID: "1", Nodes: []int{0, 1}}})
	want := []HeldDevice{{Name: "r/a/x"}, {Name: "r/b/1", Nodes: []int{0, 1}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("HeldDevices = %+v, %v; want %+v", got, err, want)
	}
	for _, tc := range []struct {
		in   []ReportedDevice
		want string
	}{
		{make([]ReportedDevice, MaxHeldDevices+1), "devices: 65 devices, at most 64"},
		{[]ReportedDevice{{Resource: "", ID: "a"}}, `devices[0]: resource "" id "a": both must be given`},
		{[]ReportedDevice{{Resource: "r/a", ID: "a", Nodes: []int{-1}}}, `devices[0] ("r/a/a"): NUMA node -1`},
		{[]ReportedDevice{{Resource: "r/a", ID: "a", Nodes: []int{4096}}}, `NUMA node 4096, not 0 to 1023`},
	} {
		if _, err := HeldDevices("devices", tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("HeldDevices(%d devices): %v, want %q", len(tc.in), err, tc.want)
		}
	}
}

// FuzzHeldDevices: whatever the kubelet reports, the devices kept are
// bounded, named, each once, their nodes node ids; or an error names the
// field.
func FuzzHeldDevices(f *testing.F) {
	f.Add("example.com/gpu", "gpu-1", 1, 3)
	f.Add("", "x", -1, 0)
	f.Add("r", "", 1<<40, 70)
	f.Fuzz(func(t *testing.T, resource, id string, node, count int) {
		count = min(max(count, 0), 2*MaxHeldDevices)
		reported := make([]ReportedDevice, count)
		for i := range reported {
			reported[i] = ReportedDevice{Resource: resource, ID: id + strings.Repeat("x", i%3), Nodes: []int{node, i % 4}}
		}
		held, err := HeldDevices("devices", reported)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "devices") {
				t.Fatalf("error %q does not name the field", err)
			}
			return
		}
		if len(held) > MaxHeldDevices || len(held) > 3 {
			t.Fatalf("%d devices kept of %d reported with 3 names", len(held), count)
		}
		for i, d := range held {
			if d.Name == "" || (i > 0 && d.Name <= held[i-1].Name) {
				t.Fatalf("devices %+v not named, sorted, each once", held)
			}
			for _, n := range d.Nodes {
				if n < 0 || n > 1023 {
					t.Fatalf("node %d kept", n)
				}
			}
		}
	})
}
