package runner

import (
	"os"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
)

// StaleLeases names the leases whose owner (`locus run`) is gone and whose
// cgroup holds no process any more: their CPUs are free again. A lease whose
// owner was killed while its command still runs stays, so its CPUs are never
// handed out twice.
func StaleLeases(cp state.Checkpoint, alive func(state.Process) bool, busy func(cgroup string) bool) []string {
	var out []string
	for name, l := range cp.Leases {
		if !alive(l.Owner) && !busy(l.Cgroup) {
			out = append(out, name)
		}
	}
	return out
}

// ProcessAlive says whether p still runs: its pid exists with the same start
// time, so a recycled pid does not keep a lease alive.
func ProcessAlive(p state.Process) bool {
	st, err := StartTime(p.PID)
	return err == nil && st == p.StartTime
}

// Self identifies the calling process for a lease.
func Self() (state.Process, error) {
	pid := os.Getpid()
	st, err := StartTime(pid)
	if err != nil {
		return state.Process{}, err
	}
	return state.Process{PID: pid, StartTime: st}, nil
}

// StartTime reads a process's start time in clock ticks since boot, field 22
// of /proc/PID/stat.
func StartTime(pid int) (uint64, error) {
	st, err := procfs.New("").Stat(pid)
	return st.StartTime, err
}

// LeasesOf are the checkpoint's leases as the decision takes them: by run
// name, as the checkpoint keys them, their cgroups and CPUs.
func LeasesOf(ls map[string]state.Lease) map[string]decide.Lease {
	out := make(map[string]decide.Lease, len(ls))
	for name, l := range ls {
		out[name] = decide.Lease{Cgroup: l.Cgroup, Assignment: l.Assignment}
	}
	return out
}
