#!/bin/sh
# Agent benchmark: how fast `locus agent --standalone` applies a config change
# to 200 workload cgroups, and what it costs at rest (CPU, RSS), on the
# 192-CPU intel-2s-48c-ht sysfs fixture and a cgroup v2 tree in a temporary
# directory. Needs no root and touches no real cgroup.
#
#   bench/agent/run.sh                      # 200 workloads, 30 changes, 60 s at rest
#   bench/agent/run.sh -changes 6 -steady 10s
#
# Targets: reconcile p99 <= 100 ms; at rest <= 1 % of one core and <= 40 MiB RSS.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/locus-agent-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

(cd "$root" && go build -o "$work/locus" ./cmd/locus)
if ! "$work/locus" agent --help >/dev/null 2>&1; then
	echo "bench/agent: this locus has no agent command; nothing to measure" >&2
	exit 1
fi
cd "$root/bench"
go build -o "$work/agent-bench" ./agent
"$work/agent-bench" -locus "$work/locus" -work "$work/run" "$@"
