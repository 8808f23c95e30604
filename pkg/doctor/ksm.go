package doctor

func init() {
	register(Check{Name: "ksm-merge-across-nodes", Order: 60, Run: checkKSM})
}

func checkKSM(env Env) Result {
	run, err := readInt(env.sys("kernel/mm/ksm/run"))
	if isMissing(err) {
		return Result{Status: NA, Found: "no " + env.sys("kernel/mm/ksm") + ": the kernel has no KSM"}
	}
	if err != nil {
		return unreadable(Warn, err, "cannot tell whether KSM merges pages across nodes")
	}
	if run != 1 {
		return Result{Status: OK, Found: "KSM not merging (run = " + itoa(run) + ")"}
	}
	across, err := readInt(env.sys("kernel/mm/ksm/merge_across_nodes"))
	if isMissing(err) {
		return Result{Status: OK, Found: "KSM running; this kernel cannot merge across nodes (no merge_across_nodes)"}
	}
	if err != nil {
		return unreadable(Warn, err, "cannot tell whether KSM merges pages across nodes")
	}
	if across == 0 {
		return Result{Status: OK, Found: "KSM running, merging within each node only (merge_across_nodes = 0)"}
	}
	if !multiNode(env) {
		return Result{Status: OK, Found: "KSM running with merge_across_nodes = 1; one NUMA node, so nothing is merged across nodes"}
	}
	return Result{Status: Warn, Found: "KSM running with merge_across_nodes = 1: identical pages of different nodes are merged into one, which every other node then reads remotely",
		Do: "write 0 to " + env.sys("kernel/mm/ksm/merge_across_nodes") + " (allowed only while no page is merged: write 2 to run first, then 1 again), or stop KSM if memory is not overcommitted"}
}
