#!/bin/sh
# Kill -9 campaign: `locus agent --standalone` on this host's real cgroup v1
# hierarchies (cpuset, memory, cpu, cpuacct), inside a sub-tree the campaign
# creates and removes (locus-crash-PID), killed with SIGKILL at a uniformly
# random point 0-2 s after its start, ROUNDS times with the config changed
# each round. Reports converged/total, originals-restored/total and the time
# to converge; exits 1 when a round failed, keeping the agent's logs and
# state under the work directory it names. Needs root.
#
#   bench/crash/run.sh                  # 100 rounds
#   ROUNDS=10 bench/crash/run.sh
#   SEED=42 bench/crash/run.sh -keep    # same configs and kill times; keep every log
#   LOCUS=bin/locus bench/crash/run.sh  # this binary instead of building one
#
# Further flags go to the campaign program (bench/crash/main.go): -resync,
# -config-settle, -max-kill, -timeout, -work.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$(mktemp -d "${TMPDIR:-/tmp}/locus-crash-bin.XXXXXX")
# The campaign removes its cgroups itself, on interrupt too; this only
# removes the binaries.
trap 'rm -rf "$bin"' EXIT
trap 'exit 130' INT TERM HUP

if [ -n "${LOCUS:-}" ]; then
	locus=$(cd "$(dirname "$LOCUS")" && pwd)/$(basename "$LOCUS")
else
	(cd "$root" && go build -o "$bin/locus" ./cmd/locus)
	locus=$bin/locus
fi
(cd "$root/bench" && go build -o "$bin/crash" ./crash)
"$bin/crash" -locus "$locus" -rounds "${ROUNDS:-100}" -seed "${SEED:-0}" "$@"
