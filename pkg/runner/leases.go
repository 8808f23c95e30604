package runner

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/agent/state"
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
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStartTime(string(raw))
}

// parseStartTime reads field 22 of a /proc/PID/stat line. The command name
// (field 2) is in parentheses and may hold spaces and ')', so fields are
// counted from the last ')'.
func parseStartTime(stat string) (uint64, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("/proc stat line %q has no command name", stat)
	}
	fields := strings.Fields(stat[end+1:])
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc stat line has %d fields after the command name, want at least 20", len(fields))
	}
	v, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc stat start time %q: %w", fields[19], err)
	}
	return v, nil
}
