#!/usr/bin/env bash
# Medians per layout, mode and test of run.sh's CSV (stdin or files), and
# each mode's ratio to the BE neighbour at the default weight in the same run.
set -euo pipefail
grep -h -v '^#' "$@" | grep -v '^layout,' | grep -v 'load average' | grep ',' | sort -t, -k1,1 -k2,2 -k4,4 -k5,5g |
awk -F, '
function median(key,   n) { n = cnt[key]; return n % 2 ? v[key, (n + 1) / 2] : (v[key, n / 2] + v[key, n / 2 + 1]) / 2 }
{ k = $1 "," $2 "," $4; cnt[k]++; v[k, cnt[k]] = $5; keys[k] = 1
  p = k ",p50"; pc[p]++; pv[p, pc[p]] = $6; q = k ",p99"; pc[q]++; pv[q, pc[q]] = $7 }
function pmedian(key, n, i, j, t, a) {
	n = pc[key]; for (i = 1; i <= n; i++) a[i] = pv[key, i]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	print "layout,mode,test,rounds,median_rps,rps_vs_default,median_p50_ms,median_p99_ms,p99_vs_default"
	for (k in keys) {
		split(k, f, ","); d = f[1] ",default," f[3]
		r = (d in keys) ? sprintf("%.2f", median(k) / median(d)) : "-"
		q = (d in keys) ? sprintf("%.2f", pmedian(k ",p99") / pmedian(d ",p99")) : "-"
		printf "%s,%d,%.0f,%s,%.3f,%.3f,%s\n", k, cnt[k], median(k), r, pmedian(k ",p50"), pmedian(k ",p99"), q
	}
}' | sort
