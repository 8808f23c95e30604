package state

import (
	"os"
	"reflect"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/workload"
)

// full is a checkpoint with every map, slice and pointer set.
func full() Checkpoint {
	a := workload.Assignment{CPUs: cpuset.New(2, 3), Policy: "full-pcpus", MemNodes: []int{0, 1},
		MemHeld: map[int]cpualloc.Memory{0: {Bytes: 1 << 30}}, Near: []int{1}}
	c := Empty()
	c.Assignments["redis"] = a
	c.Workloads["redis"] = Workload{Cgroup: "locus.slice/redis", Started: &Process{PID: 42, StartTime: 7}}
	c.Leases["run-1"] = Lease{Cgroup: "locus.slice/run-1", Assignment: a, Owner: Process{PID: 9}}
	c.QuotaRaises = map[string]cpuburst.Raise{"kubepods/pod-a/app": {QuotaUS: 200000, BaseUS: 100000, Since: time.Unix(100, 0).UTC()}}
	c.CoreIsolated = []string{"redis"}
	c.MemsFollowing = map[string]workload.MemsFollowing{"redis": {Wide: []int{0, 1}, Since: time.Unix(100, 0).UTC()}}
	return c
}

// TestCloneSharesNothing edits every reference a loaded checkpoint holds;
// the next load must not see it. A field added to the checkpoint with a
// reference in it and not copied by clone fails here.
func TestCloneSharesNothing(t *testing.T) {
	orig := full()
	c := clone(orig)
	if !reflect.DeepEqual(c, orig) {
		t.Fatalf("clone differs:\n%+v\n%+v", c, orig)
	}
	a := c.Assignments["redis"]
	a.MemNodes[0], a.Near[0], a.MemHeld[0] = 9, 9, cpualloc.Memory{}
	c.Workloads["redis"].Started.PID = 1
	l := c.Leases["run-1"]
	l.Assignment.MemNodes[0], l.Assignment.Near[0], l.Assignment.MemHeld[0] = 9, 9, cpualloc.Memory{}
	c.QuotaRaises["kubepods/pod-a/app"] = cpuburst.Raise{}
	c.CoreIsolated[0] = "other"
	c.MemsFollowing["redis"].Wide[0] = 9
	c.Assignments["new"], c.Workloads["new"], c.Leases["new"] = workload.Assignment{}, Workload{}, Lease{}
	if !reflect.DeepEqual(orig, full()) {
		t.Fatalf("editing the clone changed the original:\n%+v", orig)
	}
	// Every reference-holding field of the checkpoint is one clone copies.
	refs := 0
	for f := range reflect.TypeFor[Checkpoint]().Fields() {
		switch f.Type.Kind() {
		case reflect.Map, reflect.Slice, reflect.Pointer:
			refs++
		}
	}
	if refs != 6 {
		t.Errorf("Checkpoint has %d map, slice or pointer fields, clone copies 6: teach clone the new one", refs)
	}
}

// TestLoadCachesByContent: loads after a save decode nothing while the
// file holds the bytes saved; another writer's are decoded.
func TestLoadCachesByContent(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(full()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c, err := s.Load()
		if err != nil || !c.Assignments["redis"].CPUs.Equals(cpuset.New(2, 3)) || c.Workloads["redis"].Started.PID != 42 {
			t.Fatalf("load after save: %+v, %v", c, err)
		}
		c.Workloads["redis"].Started.PID = 1 // the caller's copy
		delete(c.Assignments, "redis")
	}
	if s.cache.decoded != 0 {
		t.Errorf("decoded %d times; the bytes saved are known", s.cache.decoded)
	}
	// Another process's update: a new file renamed over it (another inode).
	other := &Store{Dir: s.Dir}
	if err := other.Update(func(c *Checkpoint) error { delete(c.Workloads, "redis"); return nil }); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Load(); err != nil || len(c.Workloads) != 0 {
		t.Fatalf("another writer's version not read: %+v, %v", c.Workloads, err)
	}
	// An edit in place, same inode.
	if err := os.WriteFile(s.Path(checkpointFile), []byte(`{"version":1,"workloads":{"x":{"cgroup":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Load(); err != nil || c.Workloads["x"].Cgroup != "x" {
		t.Fatalf("an edit in place not read: %+v, %v", c.Workloads, err)
	}
	// A corrupt file is an error, whatever was cached.
	if err := os.WriteFile(s.Path(checkpointFile), []byte(`{"version":1,`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(); err == nil {
		t.Fatal("corrupt checkpoint loaded")
	}
}
