package cgroup

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// Throttling reads what CPU Burst decides on for a cgroup: how many CFS
// periods its tasks were throttled in (cpu.stat nr_throttled) and its CFS
// quota in microseconds, -1 for none (v1 cpu.cfs_quota_us, v2 cpu.max).
func (h *Hierarchy) Throttling(rel string) (nrThrottled uint64, quotaUS int64, err error) {
	ctrl := Controller("")
	if h.version == V1 {
		ctrl = CPU
	}
	path, err := h.file(ctrl, rel, "cpu.stat")
	if err != nil {
		return 0, 0, err
	}
	text, err := h.readFile(path)
	if err != nil {
		return 0, 0, err
	}
	found := false
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "nr_throttled" {
			if nrThrottled, err = strconv.ParseUint(f[1], 10, 64); err != nil {
				return 0, 0, fmt.Errorf("%s: nr_throttled %s is not a count", path, topology.Quote(f[1]))
			}
			found = true
		}
	}
	if !found {
		return 0, 0, fmt.Errorf("%s: no nr_throttled line", path)
	}
	q, err := h.ReadKnob(rel, CPUQuota)
	if err != nil {
		return 0, 0, err
	}
	if f := strings.Fields(q); len(f) > 0 && f[0] != "max" {
		if quotaUS, err = strconv.ParseInt(f[0], 10, 64); err != nil || quotaUS < -1 {
			return 0, 0, fmt.Errorf("cgroup %q: CFS quota %s is not microseconds", rel, topology.Quote(q))
		}
		return nrThrottled, quotaUS, nil
	}
	return nrThrottled, -1, nil
}
