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
