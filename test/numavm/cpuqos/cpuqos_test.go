// Package cpuqos runs bench/cpuqos/run.sh inside the NUMA test guest: an LS
// redis-server beside a CPU-bound BE neighbour at the default weight and
// SCHED_IDLE, once per layout; and bench/cpuqos/coreiso.sh, the layout
// "core": the same server owning a whole core under the standalone agent,
// with core isolation off and on, beside a spinner on its core's sibling.
// bench/cpuqos/guest.sh boots the guest with what they need; each line the
// scripts print goes to the console prefixed "CPUQOS: ", for the host to
// summarize.
package cpuqos

import (
	"os"
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

// core is the layout "core": coreiso.sh beside run.sh.
var core = benchscript.Script{
	Path:     "/src/bench/cpuqos/coreiso.sh",
	Boot:     "bench/cpuqos/guest.sh --kernel ubuntu --threads 2 --tcg single --smp 4",
	Prefix:   script.Prefix,
	Settings: script.Settings,
}

// unavailable begins the line coreiso.sh prints, and nothing else, where
// the kernel cannot isolate a core.
const unavailable = "# core scheduling: unavailable"

// TestCPUQoS runs the script once per layout of numavm.layouts (default
// "pinned,shared,core"; a kernel parameter holds no space) and fails when a
// run fails or leaves rows out. The core layout skips where the kernel has
// no core scheduling or no SMT, saying so.
func TestCPUQoS(t *testing.T) {
	script.Guest(t)
	for _, layout := range strings.Split(benchscript.Setting("LAYOUTS", "pinned,shared,core"), ",") {
		t.Run(layout, func(t *testing.T) {
			if layout != "core" {
				lines := script.Run(t, "LAYOUT="+layout)
				if rows := benchscript.Rows(lines, layout+","); rows == 0 || rows%6 != 0 {
					t.Errorf("layout %s: %d result rows: want 6 a round (3 modes, SET and GET)", layout, rows)
				}
				return
			}
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			lines := core.Run(t, "COOKIES="+self)
			for _, l := range lines {
				if strings.HasPrefix(l, unavailable) {
					t.Skip(strings.TrimPrefix(l, "# "))
				}
			}
			// Per round and mode (off, on): SET, GET and the neighbour.
			if rows := benchscript.Rows(lines, "core,"); rows == 0 || rows%6 != 0 {
				t.Errorf("layout core: %d result rows: want 6 a round (2 modes, SET, GET and the neighbour)", rows)
			}
		})
	}
}

// TestVerdict: the cookie helper tells none, one shared cookie and a mix
// apart.
func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		cs   []uint64
		want string
	}{
		{[]uint64{0, 0, 0}, "none"},
		{[]uint64{7, 7}, "shared 0x7"},
		{[]uint64{7, 0}, "mixed"},
		{[]uint64{0, 7}, "mixed"},
		{[]uint64{7, 8}, "mixed"},
	} {
		if got := verdict(c.cs); got != c.want {
			t.Errorf("verdict(%v) = %q, want %q", c.cs, got, c.want)
		}
	}
}
