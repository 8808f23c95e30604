// Package sample reads what a host is using right now, for the views: each
// CPU's utilisation (/proc/stat), each NUMA node's free memory (sysfs), and
// each workload's CPU time and memory per node (its cgroup). It only reads;
// the parsers are pure and table-tested.
package sample

import "github.com/locus-project/locus/pkg/cgroup"

// parseNumaStat reads a cgroup's memory per node. On cgroup v2
// (memory.numa_stat, bytes) it is anon plus file (page cache, tmpfs and
// shared memory included); on v1 the hierarchical_total line, else total,
// in pages of pageSize bytes.
func parseNumaStat(text string, v1 bool, pageSize uint64) (map[int]uint64, error) {
	if v1 {
		return cgroup.ParseNumaStat(text, []string{cgroup.Hierarchical(text, "total")}, pageSize)
	}
	return cgroup.ParseNumaStat(text, []string{"anon", "file"}, 1)
}
