#!/bin/sh
# Agent benchmark: how fast `locus agent --standalone` applies a config change
# to 200 workload cgroups, and what it costs at rest (CPU, RSS), on the
# 192-CPU intel-2s-48c-ht sysfs fixture and a cgroup v2 tree in a temporary
# directory. Needs no root and touches no real cgroup.
#
#   bench/agent/run.sh                      # 200 workloads, 30 changes, 60 s at rest
#   bench/agent/run.sh -changes 6 -steady 10s
#   bench/agent/run.sh -cgroup-in "${TMPDIR:-/tmp}"   # the fake cgroup tree on disk
#
# The fake cgroup tree goes to /dev/shm when that is a tmpfs: cgroupfs lives in
# memory, while a tree on a journaling filesystem makes every one of the
# thousand files a change rewrites cost a truncate, a journal entry and a
# writeback on close that no cgroup write pays. The state directory stays in
# the work directory, on disk, since the agent's fsyncs there are real costs.
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
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	set -- -cgroup-in /dev/shm "$@" # a later -cgroup-in wins
fi
"$work/agent-bench" -locus "$work/locus" -work "$work/run" "$@"
