#!/usr/bin/env bash
# Times the kernel alone moving 256 MiB of transparent huge pages from node 1
# to node 0 in the NUMA test guest, by call shape: move_pages(2) with every
# huge page in one call, 4 per call, 1 per call, and migrate_pages(2); with
# the process touching its memory and without. Prints the median ms per
# 2 MiB for each. See docs/benchmarks.md.
#
#   ROUNDS=5 [PIN=1] bash bench/locality/shapes.sh   # PIN=1: the caller on node 1's CPUs
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
ROUNDS="${ROUNDS:-5}"
cache="${NUMAVM_CACHE:-$repo/.cache/numavm}"
echo "host load before: $(cut -d' ' -f1-3 /proc/loadavg)"
NUMAVM_CACHE="$cache" bash "$repo/test/numavm/run.sh" --pkgs ./pkg/locality --run 'TestGuestBenchCallShapes' \
	--quiet --test-timeout 60m --timeout 4000 \
	--append "numavm.bench_shapes=1 numavm.bench_rounds=$ROUNDS numavm.bench_pin=${PIN:-0}" >/dev/null
echo "host load after: $(cut -d' ' -f1-3 /proc/loadavg)"
tr -d '\r' <"$cache/console.log" | awk '
/LOCALITY-SHAPE: / {
	for (i = 1; i <= NF; i++) if (split($i, kv, "=") == 2) f[kv[1]] = kv[2]
	key = "touching=" f["touching"] " " f["shape"]
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	v[key] = v[key] " " f["ms_per_2mib"]
}
function median(list,    m, a, i, j, t) {
	m = split(list, a, " ")
	for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return m ? a[int((m + 1) / 2)] : 0
}
END { for (i = 1; i <= n; i++) printf "%-40s median %.2f ms per 2 MiB (runs:%s)\n", order[i], median(v[order[i]]), v[order[i]] }'
