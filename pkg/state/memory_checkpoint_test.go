package state

import (
	"os"
	"reflect"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/workload"
)

// A checkpoint written before memory was accounted still loads: its
// assignments name no memory nodes (their CPUs' nodes, to pkg/decide) and
// no memory. One written now keeps the group and what each node holds.
func TestCheckpointMemory(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := `{"version":1,"assignments":{"redis":{"cpus":"2-3","policy":"full-pcpus"}},"workloads":{},` +
		`"leases":{"run-1":{"cgroup":"locus.slice/run-1","assignment":{"cpus":"4"},"owner":{"pid":9,"startTime":1}}}}`
	if err := os.WriteFile(s.Path(checkpointFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Assignments["redis"]; !a.CPUs.Equals(cpuset.New(2, 3)) || a.MemNodes != nil || !a.Memory.IsZero() || a.MemHeld != nil {
		t.Fatalf("old assignment read as %+v", a)
	}
	spilled := workload.Assignment{CPUs: cpuset.New(5), Policy: cpualloc.FullPCPUs, MemNodes: []int{0, 1},
		Memory:  cpualloc.Memory{Bytes: 3 << 30, HugePages2Mi: 4 << 20},
		MemHeld: map[int]cpualloc.Memory{0: {Bytes: 1 << 30, HugePages2Mi: 4 << 20}, 1: {Bytes: 2 << 30}}}
	c.Assignments["big"] = spilled
	if err := s.Save(c); err != nil {
		t.Fatal(err)
	}
	again, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Assignments["big"]; !got.CPUs.Equals(spilled.CPUs) || !reflect.DeepEqual(got.MemNodes, spilled.MemNodes) ||
		got.Memory != spilled.Memory || !reflect.DeepEqual(got.MemHeld, spilled.MemHeld) {
		t.Fatalf("saved %+v, loaded %+v", spilled, got)
	}
	for _, bad := range []string{`"memNodes":"0-5000"`, `"memory":{"bytes":2251799813685249}`, `"memHeld":{"-1":{"bytes":1}}`} {
		raw := `{"version":1,"assignments":{"a":{"cpus":"1","policy":"full-pcpus",` + bad + `}}}`
		if err := os.WriteFile(s.Path(checkpointFile), []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(); err == nil {
			t.Errorf("%s: loaded", bad)
		}
	}
}
