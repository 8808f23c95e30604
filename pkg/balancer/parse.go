package balancer

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

// ParseProcStat reads the per-CPU lines of /proc/stat ("cpu3 4705 356 584
// 3699 23 23 0 0 0 0"). Guest time is inside user time already, so it is
// not added again.
func ParseProcStat(text string) (map[int]CPUTimes, error) {
	out := map[int]CPUTimes{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		id, err := strconv.Atoi(f[0][3:])
		if err != nil || len(f) < 5 {
			return nil, fmt.Errorf("/proc/stat: malformed line %q", line)
		}
		var v [8]uint64
		for i := 1; i < len(f) && i <= 8; i++ {
			if v[i-1], err = strconv.ParseUint(f[i], 10, 64); err != nil {
				return nil, fmt.Errorf("/proc/stat: malformed line %q", line)
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

// SetBusy fills each partition's Busy from two readings of /proc/stat: the
// sum over its CPUs of the share of the window each was busy. A CPU missing
// from either reading (it went off- or online meanwhile) counts as idle.
func SetBusy(parts []Partition, before, after map[int]CPUTimes) {
	for i := range parts {
		var busy float64
		for _, c := range parts[i].CPUs.UnsortedList() {
			b, okb := before[c]
			a, oka := after[c]
			if okb && oka && a.Total > b.Total && a.Busy >= b.Busy {
				busy += float64(a.Busy-b.Busy) / float64(a.Total-b.Total)
			}
		}
		parts[i].Busy = busy
	}
}

// ParseNumaStat reads a cgroup's memory.numa_stat into bytes per node: the
// anonymous and shared memory on v2 ("anon N0=4096 N1=0", "shmem ..." in
// bytes), the anonymous memory of the subtree on v1 ("hierarchical_anon=2
// N0=2 N1=0", else "anon=...", in pages of pageSize). Page cache is left
// out: it is not the group's to move.
func ParseNumaStat(text string, v1 bool, pageSize uint64) (map[int]uint64, error) {
	out := map[int]uint64{}
	want := map[string]bool{"anon": true, "shmem": true}
	unit := uint64(1)
	if v1 {
		want = map[string]bool{"hierarchical_anon": true}
		if !strings.Contains(text, "hierarchical_anon=") {
			want = map[string]bool{"anon": true}
		}
		unit = pageSize
	}
	found := false
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name := f[0]
		if v1 {
			name, _, _ = strings.Cut(f[0], "=")
		}
		if !want[name] {
			continue
		}
		found = true
		for _, kv := range f[1:] {
			k, val, ok := strings.Cut(kv, "=")
			if !ok || len(k) < 2 || k[0] != 'N' {
				return nil, fmt.Errorf("memory.numa_stat: malformed field %q in %q", kv, line)
			}
			node, err1 := strconv.Atoi(k[1:])
			n, err2 := strconv.ParseUint(val, 10, 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("memory.numa_stat: malformed field %q in %q", kv, line)
			}
			out[node] += n * unit
		}
	}
	if !found {
		return nil, fmt.Errorf("memory.numa_stat: no anon line")
	}
	return out, nil
}
