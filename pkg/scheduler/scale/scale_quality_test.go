package scale

import (
	"testing"

	"k8s.io/utils/cpuset"
)

// The placement figures of the side-by-side run come from these: each
// must tell a good decision from a bad one.

func TestSharingACore(t *testing.T) {
	// On the shape, CPU c and c+96 are one core's two threads.
	threads := shape.TotalCores()
	for _, tc := range []struct {
		name string
		held map[string]map[int]string
		want int
	}{
		{"whole cores each", map[string]map[int]string{"n": {1: "a", 1 + threads: "a", 2: "b", 2 + threads: "b"}}, 0},
		{"two pods on one core", map[string]map[int]string{"n": {1: "a", 1 + threads: "b", 2: "b"}}, 2},
		{"the same CPUs on two nodes", map[string]map[int]string{"n": {1: "a"}, "m": {1 + threads: "b"}}, 0},
		{"three pods, one core shared", map[string]map[int]string{"n": {3: "a", 3 + threads: "b", 4: "c"}}, 2},
	} {
		if got := sharingACore(tc.held); got != tc.want {
			t.Errorf("%s: %d pods share a core, want %d", tc.name, got, tc.want)
		}
	}
}

func TestNUMANodes(t *testing.T) {
	threads := shape.TotalCores()
	if got := numaNodes(cpuset.New(1, 2, 1+threads)); got != 1 {
		t.Errorf("one socket's CPUs span %d NUMA nodes, want 1", got)
	}
	if got := numaNodes(cpuset.New(1, threads-1)); got != 2 {
		t.Errorf("CPUs of both sockets span %d NUMA nodes, want 2", got)
	}
}

func TestKoordDecision(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		want    string
		has     bool
		wantErr bool
	}{
		{`{"cpuset":"2-5,98-101","numaNodeResources":[{"node":0}]}`, "2-5,98-101", true, false},
		{`{"numaNodeResources":[{"node":1,"resources":{"cpu":"500m"}}]}`, "", false, false},
		{`{"cpuset":`, "", true, true},
		{`{"cpuset":"5-2"}`, "", true, true},
	} {
		cpus, has, err := decision(koord, map[string]string{koordResourceStatus: tc.raw})
		if has != tc.has || (err != nil) != tc.wantErr || (err == nil && cpus.String() != tc.want) {
			t.Errorf("%s: got %s, decision %t, error %v; want %q, %t, error %t", tc.raw, cpus, has, err, tc.want, tc.has, tc.wantErr)
		}
	}
	if _, has, _ := decision(koord, map[string]string{}); has {
		t.Error("a pod without the annotation has a decision")
	}
}
