package kubelet

import "testing"

// Every fixture must decode into a valid topology that kubelet's own policy
// accepts, with as many CPUs as kubelet's definition lists.
func TestFixturesDecode(t *testing.T) {
	fs, err := Fixtures()
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) < 20 {
		t.Fatalf("%d fixtures", len(fs))
	}
	for _, f := range fs {
		ct := CPUTopology(f.Topology)
		if ct.NumCPUs != len(f.Topology.CPUs) || ct.CPUDetails.CPUs().Size() != ct.NumCPUs {
			t.Errorf("%s: %d CPUs, details %d", f.Name, ct.NumCPUs, ct.CPUDetails.CPUs().Size())
		}
		if _, err := New(f.Topology, Config{}); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}
