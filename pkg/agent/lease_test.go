package agent

import (
	"os"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/workload"
)

// self is this test process as a lease owner that is alive.
func self(t *testing.T) state.Process {
	t.Helper()
	st, err := procfs.New("").Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return state.Process{PID: os.Getpid(), StartTime: st.StartTime}
}

// TestLeases covers the leases `locus run` leaves in the checkpoint: a live
// run's CPUs are taken; a dead run's CPUs stay taken while its cgroup still
// has processes, and are freed (the lease dropped) once it has none or is
// gone; a run in the shared pool holds no CPUs and is no problem.
func TestLeases(t *testing.T) {
	dead := state.Process{PID: os.Getpid(), StartTime: 1} // a recycled pid: not the owner
	for _, tc := range []struct {
		name      string
		owner     func(*testing.T) state.Process
		cpus      cpuset.CPUSet
		procs     string // the lease cgroup's cgroup.procs; "-" for no cgroup
		kept      bool
		batchCPUs string // the shared pool: 3 unless the lease holds it
	}{
		{"live owner", self, cpuset.New(3), "", true, "0"},
		{"dead owner, busy cgroup", func(*testing.T) state.Process { return dead }, cpuset.New(3), "4242", true, "0"},
		{"dead owner, empty cgroup", func(*testing.T) state.Process { return dead }, cpuset.New(3), "", false, "3"},
		{"dead owner, no cgroup", func(*testing.T) state.Process { return dead }, cpuset.New(3), "-", false, "3"},
		{"shared pool", self, cpuset.New(), "", true, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree := newCgroupTree(t, cgroup.V2, false, "0-3")
			tree.mkcg("pods/redis", "pods/batch")
			if tc.procs != "-" {
				tree.mkcg("locus.slice/run-1")
				tree.set("", "locus.slice/run-1", "cgroup.procs", tc.procs)
			}
			h := newHarness(t, tree, redisAndBatch, nil)
			lease := state.Lease{Cgroup: "locus.slice/run-1", Owner: tc.owner(t),
				Assignment: workload.Assignment{CPUs: tc.cpus, Policy: "full-pcpus"}}
			if err := h.a.store.Update(func(c *state.Checkpoint) error { c.Leases["run-1"] = lease; return nil }); err != nil {
				t.Fatal(err)
			}
			res := h.reconcile()
			for _, p := range res.Problems {
				if p.Workload != "" {
					t.Errorf("problem %s", p)
				}
			}
			c := h.checkpoint()
			if _, ok := c.Leases["run-1"]; ok != tc.kept {
				t.Errorf("lease kept = %v, want %v", ok, tc.kept)
			}
			if got := c.Assignments["redis"].CPUs; !got.Equals(cpuset.New(1, 2)) {
				t.Errorf("redis got %s, want 1-2", got)
			}
			if got := tree.file("pods/batch", "cpuset.cpus"); got != tc.batchCPUs {
				t.Errorf("batch cpuset.cpus = %q, want %q", got, tc.batchCPUs)
			}
			for _, w := range h.a.observation(h.a.cfg.good, nil, nil, nil, c, nil).Input(c.Assignments).Workloads {
				if w.CPU.CPUs == 0 {
					t.Errorf("the decision is asked for a workload of no CPUs: %+v", w)
				}
			}
			dropped := false
			for _, e := range h.events() {
				dropped = dropped || e.Reason == "LeaseDropped" && strings.Contains(e.Message, "run-1")
			}
			if dropped == tc.kept {
				t.Errorf("LeaseDropped event = %v with the lease kept = %v", dropped, tc.kept)
			}
		})
	}
}
