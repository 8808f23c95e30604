package state

import (
	"os"
	"strings"
	"sync"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/workload"
)

func TestLoadMissingSaveLoad(t *testing.T) {
	s, err := Open(t.TempDir() + "/state")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Load()
	if err != nil || len(c.Assignments) != 0 || c.Workloads == nil || c.Leases == nil {
		t.Fatalf("missing file: %+v, %v", c, err)
	}
	c.Assignments["redis"] = workload.Assignment{CPUs: cpuset.New(2, 3), Policy: "full-pcpus"}
	c.Workloads["redis"] = Workload{Cgroup: "locus.slice/redis", Created: true, Started: &Process{PID: 42, StartTime: 7}}
	if err := s.Save(c); err != nil {
		t.Fatal(err)
	}
	back, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	if !back.Assignments["redis"].CPUs.Equals(cpuset.New(2, 3)) || back.Workloads["redis"].Started.PID != 42 {
		t.Fatalf("round trip lost data: %+v", back)
	}
	// Compact, one line: rewritten as pods come and go, indenting cost more
	// than encoding.
	if raw, err := os.ReadFile(s.Path(checkpointFile)); err != nil || strings.Count(string(raw), "\n") != 1 || strings.Contains(string(raw), "  ") {
		t.Errorf("checkpoint.json is not compact JSON on one line (%v):\n%s", err, raw)
	}
}

func TestLoadRejectsCorruptAndNewer(t *testing.T) {
	s, _ := Open(t.TempDir())
	for body, want := range map[string]string{
		`{"version":1,"assignments":`:                    "corrupt",
		`{"version":9}`:                                  "format version 9",
		`{"version":1,"assignments":{"a":{"cpus":"z"}}}`: "corrupt",
	} {
		if err := os.WriteFile(s.Path(checkpointFile), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Load(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) error = %v, want %q", body, err, want)
		}
	}
	if err := os.WriteFile(s.Path(checkpointFile), []byte(`{"version":1,"leases":null}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Load(); err != nil || c.Leases == nil || c.Assignments == nil {
		t.Fatalf("null maps not filled: %+v, %v", c, err)
	}
}

// Concurrent Updates never lose an increment: the lock serialises them.
func TestUpdateIsSerialised(t *testing.T) {
	s, _ := Open(t.TempDir())
	const n = 20
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Update(func(c *Checkpoint) error {
				w := c.Workloads["counter"]
				if w.Started == nil {
					w.Started = &Process{}
				}
				w.Started.PID++
				c.Workloads["counter"] = w
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	c, _ := s.Load()
	if got := c.Workloads["counter"].Started.PID; got != n {
		t.Fatalf("counter = %d after %d updates", got, n)
	}
}

// Intend records the workloads the checkpoint lacks, keeps an entry another
// process wrote meanwhile, and writes nothing when the known checkpoint has
// them all.
func TestIntend(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	known, _ := s.Load()
	if err := s.Update(func(c *Checkpoint) error {
		c.Workloads["b"] = Workload{Cgroup: "other/b"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Intend(known, map[string]Workload{"a": {Cgroup: "x/a"}, "b": {Cgroup: "x/b"}}); err != nil {
		t.Fatal(err)
	}
	c, _ := s.Load()
	if c.Workloads["a"].Cgroup != "x/a" || c.Workloads["b"].Cgroup != "other/b" {
		t.Fatalf("workloads %+v", c.Workloads)
	}
	if err := os.Remove(s.Path(checkpointFile)); err != nil {
		t.Fatal(err)
	}
	if err := s.Intend(c, map[string]Workload{"a": {Cgroup: "x/a"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Path(checkpointFile)); !os.IsNotExist(err) {
		t.Fatalf("checkpoint written though every workload was known: %v", err)
	}
}

// DropAssignments removes the named workloads' assignments only, and
// writes nothing when none is named.
func TestDropAssignments(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DropAssignments(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Path(checkpointFile)); !os.IsNotExist(err) {
		t.Fatalf("checkpoint written with nothing to drop: %v", err)
	}
	c, _ := s.Load()
	c.Assignments["demo"], c.Assignments["db"] = c.Assignments["x"], c.Assignments["x"]
	if err := s.Save(c); err != nil {
		t.Fatal(err)
	}
	if err := s.DropAssignments([]string{"demo"}); err != nil {
		t.Fatal(err)
	}
	if c, _ = s.Load(); len(c.Assignments) != 1 {
		t.Fatalf("assignments %+v, want db's only", c.Assignments)
	}
	if _, ok := c.Assignments["db"]; !ok {
		t.Fatalf("assignments %+v, want db's", c.Assignments)
	}
}
