package procfs

import (
	"fmt"
	"strconv"
	"strings"
)

// CPUTimes are one CPU's counters from /proc/stat, in clock ticks.
type CPUTimes struct {
	Busy  uint64 // user, nice, system, irq, softirq, steal
	Total uint64 // Busy plus idle and iowait
}

// ParseCPUTimes reads the per-CPU lines of /proc/stat ("cpu3 4705 356 584
// 3699 23 23 0 0 0 0": user nice system idle iowait irq softirq steal guest
// guest_nice). Guest time is inside user time already, so it is not added
// again. A text without a per-CPU line is an error.
func ParseCPUTimes(text string) (map[int]CPUTimes, error) {
	out := map[int]CPUTimes{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		id, err := strconv.Atoi(f[0][3:])
		if err != nil || id < 0 || len(f) < 5 {
			return nil, fmt.Errorf("/proc/stat: malformed line %q", clip(line))
		}
		var v [8]uint64
		for i := 1; i < len(f) && i <= 8; i++ {
			if v[i-1], err = strconv.ParseUint(f[i], 10, 64); err != nil {
				return nil, fmt.Errorf("/proc/stat: malformed line %q", clip(line))
			}
		}
		busy := v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
		out[id] = CPUTimes{Busy: busy, Total: busy + v[3] + v[4]}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/proc/stat: no per-cpu line")
	}
	return out, nil
}
