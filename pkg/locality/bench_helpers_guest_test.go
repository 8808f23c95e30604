//go:build linux

package locality

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// probeBaseline is how long the probe watches the process before a move:
// about as long as a move of 256 MiB takes in the guest.
const probeBaseline = time.Second

func probeFields(r benchRun) string {
	return fmt.Sprintf(" longest_call_ms=%.2f wait_gap_ms=%.2f wait_access_ms=%.2f wait_mmap_ms=%.2f base_gap_ms=%.2f base_access_ms=%.2f base_mmap_ms=%.2f touches=%d base_touches=%d",
		ms(r.longestCall), ms(r.wait.Gap), ms(r.wait.Access), ms(r.wait.Mmap), ms(r.base.Gap), ms(r.base.Access), ms(r.base.Mmap), r.wait.Touches, r.base.Touches)
}

// anonHugeMB reads the process's transparent huge pages in MiB.
func anonHugeMB(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "AnonHugePages:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianOf(runs []benchRun, f func(benchRun) float64) float64 {
	var v []float64
	for _, r := range runs {
		v = append(v, f(r))
	}
	return median(v)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
