package probe

import (
	"os"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/workload"
)

// Resident is, for each workload opted in to moves, its resident memory in
// bytes on each NUMA node, read as Group reads a group's (memory.numa_stat:
// anonymous and shared): what moving it costs the move planner. Nothing is
// read with the node's switch off (cfg.MovesEnabled); a cgroup that cannot
// be read is left out, its cost unknown.
func (r Reader) Resident(cfg *workload.Config, ws []workload.Workload) map[string]map[int]uint64 {
	if r.H == nil || cfg == nil || !cfg.MovesEnabled {
		return nil
	}
	out := map[string]map[int]uint64{}
	for _, w := range ws {
		if !w.Movable {
			continue
		}
		text, err := r.read(cgroup.Memory, w.Cgroup, "memory.numa_stat")
		if err != nil {
			continue
		}
		if m, err := groupMemory(text, r.H.Version() == cgroup.V1, uint64(os.Getpagesize())); err == nil {
			out[w.Name] = m
		}
	}
	return out
}
