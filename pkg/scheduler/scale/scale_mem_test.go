package scale

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// resetPeakRSS hands the memory the previous pass freed back to the system
// and restarts this process's peak resident set (VmHWM) from what is
// resident now, so that each pass's peak is its own and not the largest
// of the run.
func resetPeakRSS() {
	debug.FreeOSMemory()
	// "5" resets the peak RSS (Linux 4.0 and later); without it the peak
	// spans the run, which says so in the figures' caption.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakRSS is a process's peak resident set in bytes (VmHWM of
// /proc/<pid>/status), or 0 when it cannot be read.
func peakRSS(pid int) uint64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

func mib(b uint64) string { return fmt.Sprintf("%.0fMiB", float64(b)/(1<<20)) }
