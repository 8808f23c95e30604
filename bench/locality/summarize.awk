# Summarizes the LOCALITY-BENCH run lines of a numavm console log (see run.sh):
# per workload and tool, median and best MB/s, the median of the per-round
# throughput ratios against numactl's migratepages (as a command, its start
# included) and against the same migrate_pages(2) call issued by locus (the
# kernel's speed), the longest call, the median p99 call and calls over budget,
# and the fixed cost of one move_pages call.
function median(list,    n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n ? a[int((n + 1) / 2)] : 0
}
/LOCALITY-BENCH: pages=/ {
	delete f
	for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) f[kv[1]] = kv[2]
	key = f["pages"] SUBSEP f["tool"]
	if (!(f["pages"] in seenPages)) { seenPages[f["pages"]] = 1; pagesOrder[++np] = f["pages"] }
	if (!(key in seen)) { seen[key] = 1; tools[f["pages"], ++nt[f["pages"]]] = f["tool"] }
	# Rounds of several logs (several boots) are told apart by file.
	rid = FILENAME ":" f["round"]
	if (!((f["pages"], rid) in seenRound)) { seenRound[f["pages"], rid] = 1; roundIDs[f["pages"], ++nr[f["pages"]]] = rid }
	mbps[f["pages"], rid, f["tool"]] = f["mbps"]
	rates[key] = rates[key] " " f["mbps"]
	p99[key] = p99[key] " " f["p99_stall_ms"]
	calls[key] = calls[key] " " f["calls"]
	over[key] = over[key] " " f["over_budget"]
	if (f["longest_stall_ms"] + 0 > longest[key] + 0) longest[key] = f["longest_stall_ms"]
	if (f["mbps"] + 0 > best[key] + 0) best[key] = f["mbps"]
	# The wait probe (bench_guest_test.go): per run, its longest waits
	# during the move and in the second before it.
	if ("wait_gap_ms" in f) {
		probed[key] = 1
		wgap[key] = wgap[key] " " f["wait_gap_ms"]; bgap[key] = bgap[key] " " f["base_gap_ms"]
		wacc[key] = wacc[key] " " f["wait_access_ms"]; bacc[key] = bacc[key] " " f["base_access_ms"]
		wmap[key] = wmap[key] " " f["wait_mmap_ms"]; bmap[key] = bmap[key] " " f["base_mmap_ms"]
		# The longest call (before longest_call_ms, the stall was the call).
		lc = ("longest_call_ms" in f) ? f["longest_call_ms"] : f["longest_stall_ms"]
		longs[key] = longs[key] " " lc
		stalls[key] = stalls[key] " " f["longest_stall_ms"]
		if (lc + 0 > longCall[key] + 0) longCall[key] = lc
		if (f["wait_gap_ms"] + 0 > wgapMax[key] + 0) wgapMax[key] = f["wait_gap_ms"]
		if (f["wait_mmap_ms"] + 0 > wmapMax[key] + 0) wmapMax[key] = f["wait_mmap_ms"]
		if (f["base_gap_ms"] + 0 > bgapMax[key] + 0) bgapMax[key] = f["base_gap_ms"]
		if (f["base_mmap_ms"] + 0 > bmapMax[key] + 0) bmapMax[key] = f["base_mmap_ms"]
	}
}
/LOCALITY-BENCH-CALL: / {
	for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) g[kv[1]] = kv[2]
	noopMove[g["pages"]] = noopMove[g["pages"]] " " g["noop_move_ms"]
	query[g["pages"]] = query[g["pages"]] " " g["query_ms"]
}
# rank orders the rows: budgets from the smallest, unbounded (0) after them,
# then locus's migrate_pages strategy, then numactl.
function rank(tool,    b) {
	if (tool ~ /^locus-budget/) { b = substr(tool, 13) + 0; return b == 0 ? 1e9 : b }
	# cmd-NAME-budgetN (run.sh's CMDS) after the in-process row of its budget.
	if (tool ~ /^cmd-.*-budget[0-9]+$/) { b = substr(tool, index(tool, "-budget") + 7) + 0; return (b == 0 ? 1e9 : b) + 0.5 }
	return tool == "locus-migrate_pages" ? 2e9 : 3e9
}
END {
	for (p = 1; p <= np; p++) {
		w = pagesOrder[p]
		for (i = 2; i <= nt[w]; i++) for (j = i; j > 1 && rank(tools[w, j-1]) > rank(tools[w, j]); j--) {
			tmp = tools[w, j]; tools[w, j] = tools[w, j-1]; tools[w, j-1] = tmp
		}
		printf "\n%s pages, %d round(s)\n", w, nr[w]
		printf "| tool | median MB/s | best MB/s | ratio vs migratepages | ratio vs migrate_pages(2) | longest call ms | median p99 ms | median calls | median over budget |\n"
		printf "|---|---|---|---|---|---|---|---|---|\n"
		for (t = 1; t <= nt[w]; t++) {
			tool = tools[w, t]; key = w SUBSEP tool
			r1 = ""; r2 = ""
			for (r = 1; r <= nr[w]; r++) {
				rid = roundIDs[w, r]
				m = mbps[w, rid, tool]
				if (m == "") continue
				if (mbps[w, rid, "numactl-migratepages"] > 0) r1 = r1 " " m / mbps[w, rid, "numactl-migratepages"]
				if (mbps[w, rid, "locus-migrate_pages"] > 0) r2 = r2 " " m / mbps[w, rid, "locus-migrate_pages"]
			}
			printf "| %s | %.1f | %.1f | %.2f | %.2f | %.0f | %.0f | %d | %d |\n", tool, median(rates[key]), best[key],
				median(r1), median(r2), longest[key], median(p99[key]), median(calls[key]), median(over[key])
		}
		# Each round's ratio against migratepages, to show the spread.
		printf "\nper round, MB/s over migratepages' in the same round:\n| round |"
		for (t = 1; t <= nt[w]; t++) printf " %s |", tools[w, t]
		printf "\n|---|"
		for (t = 1; t <= nt[w]; t++) printf "---|"
		printf "\n"
		for (r = 1; r <= nr[w]; r++) {
			rid = roundIDs[w, r]; printf "| %s |", rid
			for (t = 1; t <= nt[w]; t++) {
				m = mbps[w, rid, tools[w, t]]; b = mbps[w, rid, "numactl-migratepages"]
				if (m != "" && b > 0) printf " %.2f |", m / b; else printf " |"
			}
			printf "\n"
		}
		# What the process waited for, beside how long the tool's calls were.
		printf "\nwhat the process waited for (median over rounds, the longest of any round in brackets; base: the second before each move):\n"
		printf "| tool | longest call ms | longest stall ms, by the tool | touch gap ms | base touch gap ms | one touch ms | base one touch ms | mmap+munmap ms | base mmap+munmap ms |\n"
		printf "|---|---|---|---|---|---|---|---|---|\n"
		for (t = 1; t <= nt[w]; t++) {
			tool = tools[w, t]; key = w SUBSEP tool
			if (!(key in probed)) continue
			printf "| %s | %.0f (%.0f) | %.0f (%.0f) | %.1f (%.1f) | %.1f (%.1f) | %.1f | %.1f | %.1f (%.1f) | %.1f (%.1f) |\n", tool,
				median(longs[key]), longCall[key], median(stalls[key]), longest[key], median(wgap[key]), wgapMax[key], median(bgap[key]), bgapMax[key],
				median(wacc[key]), median(bacc[key]), median(wmap[key]), wmapMax[key], median(bmap[key]), bmapMax[key]
		}
		if (noopMove[w] != "") printf "\nfixed cost of one call (median over rounds): move_pages with nothing to move %.2f ms, status query of one page %.2f ms\n", median(noopMove[w]), median(query[w])
	}
}
