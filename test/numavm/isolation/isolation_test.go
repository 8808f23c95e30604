// Package isolation runs bench/isolation/run.sh inside the NUMA test guest:
// an LS redis-server alone, beside a CPU- and memory-bandwidth BE neighbour
// with everything shared, and under Locus (its own CPU, its memory on that
// CPU's node, the neighbour SCHED_IDLE in the BE pool). bench/isolation/guest.sh
// boots the guest with what it needs; each line the script prints goes to the
// console prefixed "ISOLATION: ", for the host to summarize.
package isolation

import (
	"testing"

	"github.com/locus-project/locus/test/numavm/benchscript"
)

var script = benchscript.Script{
	Path:   "/src/bench/isolation/run.sh",
	Boot:   "bench/isolation/guest.sh",
	Prefix: "ISOLATION: ",
	Settings: []string{"ROUNDS", "REQUESTS", "WARMUP", "CLIENTS", "SETTLE", "CPUS",
		"BE_CPUS", "BE_MEMBW", "BE_MEMBW_SIZE", "MEMORY_REQUEST"},
}

// TestIsolation runs the benchmark and fails when the script fails or leaves
// rows out.
func TestIsolation(t *testing.T) {
	script.Guest(t)
	rows := benchscript.Rows(script.Run(t), "alone,", "shared,", "locus,")
	if rows == 0 || rows%6 != 0 {
		t.Errorf("%d result rows: want 6 a round (3 cases, SET and GET)", rows)
	}
}
