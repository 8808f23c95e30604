// Package cpuqos runs bench/cpuqos/run.sh inside the NUMA test guest: an LS
// redis-server beside a CPU-bound BE neighbour at the default weight and
// SCHED_IDLE, once per layout. bench/cpuqos/guest.sh boots the guest with
// what it needs; each line the script prints goes to the console prefixed
// "CPUQOS: ", for the host to summarize.
package cpuqos

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/test/numavm/benchscript"
)

var script = benchscript.Script{
	Path:     "/src/bench/cpuqos/run.sh",
	Boot:     "bench/cpuqos/guest.sh",
	Prefix:   "CPUQOS: ",
	Settings: []string{"ROUNDS", "REQUESTS", "CLIENTS", "BE_CPUS"},
}

// TestCPUQoS runs the script once per layout of numavm.layouts (default
// "pinned,shared"; a kernel parameter holds no space) and fails when a run
// fails or leaves rows out.
func TestCPUQoS(t *testing.T) {
	script.Guest(t)
	for _, layout := range strings.Split(benchscript.Setting("LAYOUTS", "pinned,shared"), ",") {
		lines := script.Run(t, "LAYOUT="+layout)
		rows := benchscript.Rows(lines, layout+",")
		if rows == 0 || rows%6 != 0 {
			t.Errorf("layout %s: %d result rows: want 6 a round (3 modes, SET and GET)", layout, rows)
		}
	}
}
