package balancer

import "github.com/locus-project/locus/pkg/procfs"

// CPUTimes are one CPU's counters from /proc/stat (procfs.ParseCPUTimes).
type CPUTimes = procfs.CPUTimes

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
