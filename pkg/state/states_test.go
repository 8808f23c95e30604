package state

import (
	"reflect"
	"sync"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/workload"
)

// TestStates holds the checkpoint on disk and in memory to one behaviour.
func TestStates(t *testing.T) {
	states := map[string]func(t *testing.T) State{
		"store": func(t *testing.T) State {
			s, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"memory": func(*testing.T) State { return NewMemory() },
	}
	for name, open := range states {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			c, err := s.Load()
			if err != nil || !reflect.DeepEqual(c, Empty()) {
				t.Fatalf("fresh state = %+v, %v; want empty", c, err)
			}

			c.Assignments["a"] = workload.Assignment{CPUs: cpuset.New(2, 3)}
			c.Workloads["a"] = Workload{Cgroup: "pods/a", Started: &Process{PID: 7, StartTime: 9}}
			if err := s.Save(c); err != nil {
				t.Fatal(err)
			}
			c.Workloads["a"].Started.PID = 8 // the caller's copy, not the state
			delete(c.Assignments, "a")
			got, err := s.Load()
			if err != nil || got.Workloads["a"].Started.PID != 7 || got.Assignments["a"].CPUs.String() != "2-3" {
				t.Fatalf("Load = %+v, %v: shares memory with what was saved, or lost it", got, err)
			}
			got.Workloads["b"] = Workload{Cgroup: "x"}
			if again, _ := s.Load(); len(again.Workloads) != 1 {
				t.Fatalf("a loaded checkpoint's change reached the state: %+v", again.Workloads)
			}

			// Intend adds what known lacks and keeps what is there.
			known, _ := s.Load()
			ws := map[string]Workload{"a": {Cgroup: "changed"}, "b": {Cgroup: "pods/b"}}
			if err := s.Intend(known, ws); err != nil {
				t.Fatal(err)
			}
			got, _ = s.Load()
			if got.Workloads["a"].Cgroup != "pods/a" || got.Workloads["b"].Cgroup != "pods/b" {
				t.Fatalf("after Intend: %+v", got.Workloads)
			}

			if err := s.DropAssignments([]string{"a", "gone"}); err != nil {
				t.Fatal(err)
			}
			if got, _ = s.Load(); len(got.Assignments) != 0 || len(got.Workloads) != 2 {
				t.Fatalf("after DropAssignments: %+v", got)
			}

			// Updates under the lock never lose one another.
			var wg sync.WaitGroup
			for i := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := s.Update(func(c *Checkpoint) error {
						c.Leases[string(rune('a'+i))] = Lease{Cgroup: "l"}
						return nil
					}); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			if got, _ = s.Load(); len(got.Leases) != 20 {
				t.Fatalf("%d leases after 20 concurrent updates", len(got.Leases))
			}

			// A valid checkpoint is not rebuilt.
			aside, err := s.Rebuild(func() Checkpoint { t.Fatal("observed a valid checkpoint"); return Empty() })
			if err != nil || aside != "" {
				t.Fatalf("Rebuild of a valid checkpoint = %q, %v", aside, err)
			}
		})
	}
}
