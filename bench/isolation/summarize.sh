#!/usr/bin/env bash
# Medians of run.sh's output (stdin or files) per case and test, and the
# median over rounds of each round's ratio to `alone` in the same round; the
# neighbour's median CPUs and memory bandwidth per case (from its summary
# lines) and the median of how often the server was preempted while measured
# (both tests together); then whether the goal holds: the server's p99 under Locus within
# GOAL (1.2) times alone.
set -euo pipefail
goal=${GOAL:-1.2}
# Rows: case,round,test,rps,p50,p99; from the neighbour's summaries
# nb,case,round,cpus,MiB/s; and pr,case,round,preemptions of the server.
cat "$@" | sed -n -e '/^[a-z]*,[0-9]*,[A-Z]*,/p' \
	-e 's/^# round \([0-9]*\) \([a-z]*\): server preempted \([0-9]*\) times.*/pr,\2,\1,\3/p' \
	-e 's/^# round \([0-9]*\) \([a-z]*\): neighbour ran .*(\([0-9.]*\) CPUs).*(\([0-9.]*\) \([KMG]*i*B\)\/s)$/nb,\2,\1,\3,\4,\5/p' |
awk -F, -v goal="$goal" '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$1 == "nb" { mib = $5 * ($6 == "GiB" ? 1024 : $6 == "KiB" ? 1 / 1024 : $6 == "B" ? 1 / 1048576 : 1)
	nbcpu[$2] = nbcpu[$2] " " $4; nbbw[$2] = nbbw[$2] " " mib; next }
$1 == "pr" { pre[$2] = pre[$2] " " $4; next }
{ c = $1; r = $2; t = $3; rps[c, r, t] = $4; p50[c, r, t] = $5; p99[c, r, t] = $6
  cases[c] = 1; tests[t] = 1; rounds[r] = 1 }
END {
	print "case,test,rounds,rps,p50_ms,p99_ms,rps_vs_alone,p50_vs_alone,p99_vs_alone,neighbour_cpus,neighbour_MiB_per_s,server_preempted"
	for (c in cases) for (t in tests) {
		n = 0; lr = l5 = l9 = qr = q5 = q9 = ""
		for (r in rounds) {
			if (!((c, r, t) in rps)) continue
			n++; lr = lr " " rps[c, r, t]; l5 = l5 " " p50[c, r, t]; l9 = l9 " " p99[c, r, t]
			if (("alone", r, t) in rps && rps["alone", r, t] > 0 && p50["alone", r, t] > 0 && p99["alone", r, t] > 0) {
				qr = qr " " rps[c, r, t] / rps["alone", r, t]
				q5 = q5 " " p50[c, r, t] / p50["alone", r, t]
				q9 = q9 " " p99[c, r, t] / p99["alone", r, t]
			}
		}
		if (n == 0) continue
		ratio = (qr == "") ? "-,-,-" : sprintf("%.2f,%.2f,%.2f", median(qr), median(q5), median(q9))
		nb = (c in nbcpu) ? sprintf("%.2f,%.0f", median(nbcpu[c]), median(nbbw[c])) : "-,-"
		nb = nb "," ((c in pre) ? sprintf("%.0f", median(pre[c])) : "-")
		printf "%s,%s,%d,%.0f,%.3f,%.3f,%s,%s\n", c, t, n, median(lr), median(l5), median(l9), ratio, nb | "sort -t, -k1,1 -k2,2"
		if (c == "locus" && q9 != "") verdict[t] = median(q9)
	}
	close("sort -t, -k1,1 -k2,2")
	for (t in verdict)
		printf "# goal: %s p99 under Locus %.2fx alone, %s (goal %sx)\n", t, verdict[t], verdict[t] <= goal ? "met" : "NOT met", goal
}'
