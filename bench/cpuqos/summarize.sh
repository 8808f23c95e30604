#!/usr/bin/env bash
# Medians per layout, mode and test of run.sh's CSV (stdin or files), and
# each mode's ratio to the BE neighbour at the default weight: the ratio of
# the medians (rps_vs_default, p99_vs_default) and the median over rounds of
# each round's ratio to the default weight in the same round
# (round_rps_vs_default, round_p99_vs_default), which outside load that
# drifts over the run affects less; the same per-round medians against no
# neighbour (round_rps_vs_alone, round_p99_vs_alone); and in how many rounds
# the mode's rps was above the default weight's (rounds_above_default).
# The core layout (coreiso.sh) has no default weight: there the reference is
# core isolation off, and a second table gives the medians of its neighbour
# rows, with the median over rounds of each round's ratio of the spinner's
# CPU share with isolation on to its share with it off.
set -euo pipefail
in=$(cat "$@")
grep -E '^[a-z]+,[a-z]+,[0-9]+,[A-Z]+,' <<<"$in" |
awk -F, '
# rounds_vs KEY REF: the medians over rounds of the ratios of KEY to REF
# (rps, p99) in the same round, as "rps,p99" ("-,-" without a round of both);
# above is then in how many of those rounds the rps of KEY was the higher.
function rounds_vs(k, ref,   n, rr, rq) {
	above = 0
	for (n in rounds) if ((k, n) in r && (ref, n) in r && r[ref, n] > 0 && q[ref, n] > 0) {
		rr = rr " " r[k, n] / r[ref, n]; rq = rq " " q[k, n] / q[ref, n]; above += r[k, n] > r[ref, n]
	}
	return rr == "" ? "-,-" : sprintf("%.2f,%.2f", median(rr), median(rq))
}
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $1 "," $2 "," $4; keys[k] = 1; cnt[k]++; rounds[$3] = 1
  rps[k] = rps[k] " " $5; p50[k] = p50[k] " " $6; p99[k] = p99[k] " " $7
  r[k, $3] = $5; q[k, $3] = $7 }
END {
	print "layout,mode,test,rounds,median_rps,rps_vs_default,median_p50_ms,median_p99_ms,p99_vs_default," \
		"round_rps_vs_default,round_p99_vs_default,round_rps_vs_alone,round_p99_vs_alone,rounds_above_default"
	for (k in keys) {
		split(k, f, ","); d = f[1] ",default," f[3]
		if (!(d in keys)) d = f[1] ",off," f[3]
		mr = median(rps[k]); m9 = median(p99[k])
		if (d in keys) {
			a = sprintf("%.2f", mr / median(rps[d])); b = sprintf("%.2f", m9 / median(p99[d]))
		} else { a = b = "-" }
		vd = rounds_vs(k, d); ad = above
		printf "%s,%d,%.0f,%s,%.3f,%.3f,%s,%s,%s,%s\n", k, cnt[k], mr, a, median(p50[k]), m9, b,
			vd, rounds_vs(k, f[1] ",alone," f[3]), d == k ? "-" : ad
	}
}' | { IFS= read -r header && printf '%s\n' "$header"; sort; }
{ grep -E '^[a-z]+,[a-z]+,[0-9]+,neighbour,' <<<"$in" || true; } | awk -F, '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ k = $1 "," $2; keys[k] = 1; cnt[k]++; cpu[k] = cpu[k] " " $5; fn[k] = fn[k] " " $6; fl[k] = fl[k] " " $7
  c[k, $3] = $5; rounds[$3] = 1 }
END {
	if (!length(keys)) exit
	print "layout,mode,rounds,median_neighbour_cpu_pct,round_cpu_vs_off,median_forceidle_neighbour_ms,median_forceidle_ls_ms"
	for (k in keys) {
		split(k, f, ","); o = f[1] ",off"; rr = ""
		for (n in rounds) if ((k, n) in c && (o, n) in c && c[o, n] > 0) rr = rr " " c[k, n] / c[o, n]
		printf "%s,%d,%.1f,%s,%.1f,%.1f\n", k, cnt[k], median(cpu[k]), rr == "" ? "-" : sprintf("%.2f", median(rr)),
			median(fn[k]), median(fl[k])
	}
}' | { IFS= read -r header && printf '\n%s\n' "$header"; sort; }
