package doctor

func init() {
	register(Check{Name: "cpu-burst", Order: 96, Run: checkCPUBurst})
}

// checkCPUBurst says whether CPU Burst's burst buffer can be written: the
// kernel's CFS bandwidth burst file (v1 cpu.cfs_burst_us on the cpu root,
// v2 cpu.max.burst beside a child cgroup's cpu.max; Linux 5.14). Its
// absence skips the buffer only: the quota raise needs nothing new.
func checkCPUBurst(env Env) Result {
	v, err := cgroupVersion(env)
	if err != nil {
		return unreadable(NA, err, "")
	}
	file := env.cgroup("cpu", "cpu.cfs_burst_us")
	if v == 2 {
		file = ""
		for _, p := range []string{workloadParents[0], workloadParents[1], "system.slice", anyChildName(env.CgroupRoot)} {
			if p != "" && exists(env.cgroup(p, "cpu.max")) {
				file = env.cgroup(p, "cpu.max.burst")
				break
			}
		}
		if file == "" {
			return Result{Status: NA, Found: "no child cgroup with cpu.max to look beside: the cpu controller is not enabled for the children"}
		}
	}
	if exists(file) {
		return Result{Status: OK, Found: file + ": present: CPU Burst's burst buffer (koordinator.sh/cpuBurst, cpu-burst-config) is written"}
	}
	return Result{Status: Warn, Found: file + ": absent (the kernel predates Linux 5.14)",
		Do: "CPU Burst's burst buffer is skipped on this kernel (its CFS quota raise still works); Linux 5.14 or later has it"}
}

// anyChildName is the name of a child directory of dir, or "".
func anyChildName(dir string) string {
	if c := anyChild(dir); c != "" {
		return c[len(dir)+1:]
	}
	return ""
}
