package procfs

import (
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxStat bounds a read of /proc/stat: a line per CPU and the interrupt
// counts, far below this on the largest machines.
const maxStat = 4 << 20

// CPUTimes reads each CPU's counters from the root's stat file (/proc/stat).
func (fs FS) CPUTimes() (map[int]CPUTimes, error) {
	path := filepath.Join(fs.root, "stat")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxStat+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxStat {
		return nil, fmt.Errorf("%s: over %d bytes", path, maxStat)
	}
	return ParseCPUTimes(string(raw))
}

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
		// The sums must not wrap: a wrapped busy above total would read as
		// more than 100 % (or a negative) utilisation.
		busy, ok1 := sum(v[0], v[1], v[2], v[5], v[6], v[7])
		total, ok2 := sum(busy, v[3], v[4])
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("/proc/stat: cpu%d: counters add up to more than 2^64", id)
		}
		out[id] = CPUTimes{Busy: busy, Total: total}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("/proc/stat: no per-cpu line")
	}
	return out, nil
}

// sum adds counters; ok is false when the sum does not fit in 64 bits.
func sum(vs ...uint64) (total uint64, ok bool) {
	for _, v := range vs {
		var carry uint64
		if total, carry = bits.Add64(total, v, 0); carry != 0 {
			return 0, false
		}
	}
	return total, true
}
