#!/usr/bin/env bash
# Moves the same 256 MiB of a running process from NUMA node 1 to node 0 with
# `locus` at several stall budgets, with locus's migrate_pages strategy and
# with numactl's migratepages, side by side in one boot of the NUMA test guest
# (test/numavm), and prints a table per workload. See docs/benchmarks.md.
#
#   bash bench/locality/run.sh                          # budgets 20,50,100,unbounded; 5 rounds; THP
#   BUDGETS=20,0 ROUNDS=3 PAGES=thp,4k bash bench/locality/run.sh
#
# PIN=1 runs every tool from node 1's CPUs, away from the process's (as an
# agent runs on CPUs of its own). BUDGETS are in ms (0: unbounded); PAGES: thp (memory in transparent huge
# pages) and/or 4k (madvised against them). The guest's console log is kept
# in $NUMAVM_CACHE/console.log (default .cache/numavm/console.log).
#
# CMDS="main:/tmp/locus-main branch:bin/locus" adds `locus migrate` binaries,
# copied into the guest, as tools cmd-NAME-budgetN at the first of BUDGETS:
# two builds measured alike in the same boot (the binaries' names must differ).
# More colon-separated arguments after a path go to that tool's `locus migrate`:
# CMDS="main:/tmp/locus-main call:bin/locus:--stall=call" (a binary
# may serve several tools with different arguments).
#
# CALL=1 adds each budget with --stall call (locus-budgetN-call), the
# budget bounding every call as before, beside the default (the page).
# FIXED="16,64,all" adds locus with every call of that many huge pages' worth
# of base pages (all: 256 MiB), whatever a call takes, as tools locus-hugeN.
# The process runs a wait probe; a second table gives, per tool, what its
# thread waited for while its memory moved (the longest gap between two
# touches, the longest touch, the longest mmap+munmap) against the second
# before each move.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
BUDGETS="${BUDGETS:-20,50,100,0}"
ROUNDS="${ROUNDS:-5}"
PAGES="${PAGES:-thp}"
cache="${NUMAVM_CACHE:-$repo/.cache/numavm}"
bins=() cmds=()
for nc in ${CMDS:-}; do
	name="${nc%%:*}" rest="${nc#*:}"
	file="${rest%%:*}" args="${rest#"$file"}"
	path="$(realpath "$file")"
	case " ${bins[*]} " in *" $path "*) ;; *) bins+=("$path") ;; esac
	cmds+=("$name:/usr/bin/$(basename "$path")$args")
done
cmdsArg=""
[ ${#cmds[@]} -eq 0 ] || cmdsArg=" numavm.bench_cmds=$(IFS=,; echo "${cmds[*]}")"
echo "host load before: $(cut -d' ' -f1-3 /proc/loadavg)"
NUMAVM_CACHE="$cache" bash "$repo/test/numavm/run.sh" --pkgs ./pkg/locality --run 'TestGuestBenchLocusVsMigratepages' \
	--quiet --test-timeout 60m --timeout 4000 --bins "${bins[*]}" \
	--append "numavm.bench_budgets=$BUDGETS numavm.bench_rounds=$ROUNDS numavm.bench_pages=$PAGES numavm.bench_pin=${PIN:-0}$cmdsArg${FIXED:+ numavm.bench_fixed=$FIXED} numavm.bench_call=${CALL:-0}" >/dev/null
echo "host load after: $(cut -d' ' -f1-3 /proc/loadavg)"
tr -d '\r' <"$cache/console.log" | awk -f "$here/summarize.awk"
