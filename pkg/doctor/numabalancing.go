package doctor

import "fmt"

func init() {
	register(Check{Name: "numa-balancing", Order: 50, Run: checkNUMABalancing})
}

func checkNUMABalancing(env Env) Result {
	path := env.proc("sys/kernel/numa_balancing")
	n, err := readInt(path)
	if isMissing(err) {
		return Result{Status: NA, Found: "no " + path + ": the kernel has no automatic NUMA balancing"}
	}
	if err != nil {
		return unreadable(Warn, err, "cannot tell whether AutoNUMA moves pinned workloads' memory")
	}
	if n == 0 {
		return Result{Status: OK, Found: "kernel.numa_balancing = 0 (off)"}
	}
	if n < 0 || n > 3 {
		return Result{Status: Warn, Found: fmt.Sprintf("%s: %d is not a known mode (0-3)", path, n)}
	}
	found := fmt.Sprintf("kernel.numa_balancing = %d (on)", n)
	if !multiNode(env) {
		return Result{Status: OK, Found: found + "; one NUMA node, so it has nothing to move"}
	}
	return Result{Status: Warn, Found: found + ": the kernel unmaps pages to sample where they are used, then moves tasks and pages between nodes",
		Do: "for workloads Locus pins, these hinting faults cost time and the moves work against the binding and Locus's memory locality runs: sysctl kernel.numa_balancing=0 (persist it in /etc/sysctl.d), unless most workloads are left unpinned"}
}
