// Package sample reads what a host is using right now, for the views: each
// CPU's utilisation (/proc/stat), each NUMA node's free memory (sysfs), and
// each workload's CPU time and memory per node (its cgroup). It only reads;
// the parsers are pure and table-tested.
package sample

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// cpuTimes are one CPU's jiffies: busy and the total.
type cpuTimes struct{ busy, total uint64 }

// parseProcStat reads the per-CPU lines of /proc/stat ("cpu3 user nice
// system idle iowait irq softirq steal guest guest_nice"). Idle and iowait
// are idle time; guest time is already counted in user.
func parseProcStat(text string) (map[int]cpuTimes, error) {
	out := map[int]cpuTimes{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		id, err := strconv.Atoi(f[0][3:])
		if err != nil {
			return nil, fmt.Errorf("/proc/stat: %q is not a CPU", f[0])
		}
		var t cpuTimes
		for i, s := range f[1:min(len(f), 9)] {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/stat: %s field %d: %q is not a count", f[0], i+1, s)
			}
			t.total += v
			if i != 3 && i != 4 { // idle, iowait
				t.busy += v
			}
		}
		out[id] = t
	}
	return out, nil
}

// parseNumaStat reads a cgroup's memory per node. On cgroup v2
// (memory.numa_stat, bytes) it is anon plus file (page cache, tmpfs and
// shared memory included); on v1 the hierarchical_total line, else total,
// in pages of pageSize bytes.
func parseNumaStat(text string, v1 bool, pageSize uint64) (map[int]uint64, error) {
	want, unit := []string{"anon", "file"}, uint64(1)
	if v1 {
		want, unit = []string{"total"}, pageSize
		if strings.Contains(text, "hierarchical_total=") {
			want = []string{"hierarchical_total"}
		}
	}
	out := map[int]uint64{}
	found := false
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		// v2 lines read "anon N0=4096 N1=0", v1 lines "total=123 N0=100 N1=23".
		key, _, _ := strings.Cut(f[0], "=")
		rest := f[1:]
		if !slices.Contains(want, key) {
			continue
		}
		found = true
		for _, kv := range rest {
			n, v, ok := strings.Cut(kv, "=")
			if !ok || !strings.HasPrefix(n, "N") {
				return nil, fmt.Errorf("memory.numa_stat: %s: %q is not N<node>=<count>", key, kv)
			}
			node, err1 := strconv.Atoi(n[1:])
			count, err2 := strconv.ParseUint(v, 10, 64)
			if err1 != nil || err2 != nil || node < 0 {
				return nil, fmt.Errorf("memory.numa_stat: %s: %q is not N<node>=<count>", key, kv)
			}
			out[node] += count * unit
		}
	}
	if !found {
		return nil, fmt.Errorf("memory.numa_stat: no %s line", strings.Join(want, " or "))
	}
	return out, nil
}
