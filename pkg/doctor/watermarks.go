package doctor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/topology"
)

func init() {
	register(Check{Name: "vm-watermarks", Order: 80, Run: checkWatermarks})
}

func checkWatermarks(env Env) Result {
	minFree, err := readInt(env.proc("sys/vm/min_free_kbytes"))
	if isMissing(err) {
		return Result{Status: NA, Found: "no " + env.proc("sys/vm/min_free_kbytes")}
	}
	if err != nil {
		return unreadable(Warn, err, "cannot tell the global memory watermarks")
	}
	found := fmt.Sprintf("vm.min_free_kbytes = %d", minFree)
	total, err := memTotalKB(env)
	if err != nil {
		return Result{Status: Warn, Found: found + "; " + err.Error()}
	}
	if total > 0 {
		found += fmt.Sprintf(" (%.1f %% of %d MiB)", float64(minFree)*100/float64(total), total>>10)
	}
	scale, err := readInt(env.proc("sys/vm/watermark_scale_factor"))
	switch {
	case err == nil:
		found += fmt.Sprintf(", vm.watermark_scale_factor = %d (%.2f %%)", scale, float64(scale)/100)
	case !isMissing(err):
		return Result{Status: Warn, Found: found + "; " + err.Error()}
	}
	have, _, _ := memKnobsPresent(env)
	if !have[cgroup.MemoryWmarkMinAdj] {
		return Result{Status: NA, Found: found + "; no memory.wmark_min_adj here, so nothing of Locus acts on them"}
	}
	return Result{Status: OK, Found: found + "; memory.wmark_min_adj moves each cgroup's min watermark from this global one (negative lowers it for LS workloads, positive raises it for BE)",
		Do: "with memory overcommitted, a low vm.min_free_kbytes may OOM the node before BE memory is reclaimed: raise it (e.g. 4000000 on 32 GiB)"}
}

// memTotalKB reads MemTotal from /proc/meminfo.
func memTotalKB(env Env) (int64, error) {
	path := env.proc("meminfo")
	s, err := readText(path, maxAttr)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(s, "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(v)
			if len(f) >= 1 {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil && n >= 0 {
					return n, nil
				}
			}
			return 0, &readErr{path: path, reason: "MemTotal " + topology.Quote(v) + " is not a number of kB"}
		}
	}
	return 0, &readErr{path: path, reason: "no MemTotal line"}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
