#!/usr/bin/env bash
# Brings the real-node e2e up and down, or runs it whole, again and again beside a
# CPU-bound neighbour, and counts the runs that failed and those that left
# anything behind (docs/e2e.md, "Starting and stopping under load").
#
#   hack/e2e-soak.sh updown [N]   hack/e2e.sh up, then down, N times (default 20)
#   hack/e2e-soak.sh test [N]     hack/e2e.sh test (make e2e) N times (default 5)
#
# LOCUS_E2E_SOAK_CPU: CPUs `locus stress` keeps busy the whole time (default: all
# of them; 0: no neighbour). Each run's output is in LOCUS_E2E_SOAK_LOGS (default
# .cache/e2e-soak). Exits 1 when any run failed or left something behind.
set -uo pipefail
# shellcheck source=hack/e2e-lib.sh
. "$(dirname "$0")/e2e-lib.sh"

mode=${1:-}
case "$mode" in
updown) runs=${2:-20} ;;
test) runs=${2:-5} ;;
*)
	sed -n '6,7p' "$0" >&2
	exit 2
	;;
esac
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "runs: want a positive number, not $runs"
cpu=${LOCUS_E2E_SOAK_CPU:-$(nproc)}
logs=${LOCUS_E2E_SOAK_LOGS:-$repo/.cache/e2e-soak}
mkdir -p "$logs"
cd "$repo" || exit 1

# leftovers: what a run left on the host, checked here without down's own
# functions so that a mistake in them cannot hide itself. Prints one line per
# thing left.
leftovers() {
	local h
	[ ! -e "$E2E_DIR" ] || echo "$E2E_DIR exists"
	[ ! -e "/run/netns/$E2E_NETNS" ] || echo "network namespace $E2E_NETNS exists"
	[ ! -e "$E2E_CG" ] || echo "$E2E_CG exists"
	for h in /sys/fs/cgroup/*/; do
		[ ! -e "$h$E2E_CGROUP_TOP" ] || echo "$h$E2E_CGROUP_TOP exists"
	done
	# Any process naming the run directory or running one of the node's binaries.
	pgrep -a -f -- "$E2E_DIR|$E2E_BIN/" | sed 's/^/process: /'
}

if [ "$mode" = test ]; then
	# The same binaries every run: build once, so the runs measure the node.
	"$repo/hack/e2e-build.sh" >"$logs/build.log" 2>&1 || die "build failed: $logs/build.log"
fi

# Each run and the check of what it left are made under the node lock (see
# hack/e2e.sh), so that another checkout's run can go between two runs but is
# never taken for this one's leftovers. The runs themselves do not lock again,
# and get no copy of the lock's descriptor.
exec {lockfd}>/run/lock/locus-e2e.lock
export LOCUS_E2E_LOCKED=1
flock "$lockfd"
[ -z "$(leftovers)" ] || die "the host is not clean before the first run: $(leftovers)"
flock -u "$lockfd"

stress_pid=
if [ "$cpu" != 0 ]; then
	make -s locus >/dev/null || die "cannot build bin/locus"
	"$repo/bin/locus" stress --cpu "$cpu" >"$logs/stress.log" 2>&1 &
	stress_pid=$!
	trap 'kill -TERM "$stress_pid" 2>/dev/null; wait "$stress_pid" 2>/dev/null' EXIT
	sleep 1
	kill -0 "$stress_pid" 2>/dev/null || die "locus stress did not start: $(cat "$logs/stress.log")"
fi
log "soak: $mode x$runs, neighbour: locus stress --cpu $cpu, logs in $logs"

failed=0
left=0
times=()
for ((r = 1; r <= runs; r++)); do
	out=$logs/$mode-$r.log
	ok=1
	flock "$lockfd"
	t0=$(now)
	if [ "$mode" = updown ]; then
		"$repo/hack/e2e.sh" up >"$out" 2>&1 {lockfd}>&- || ok=0
		t1=$(now)
		"$repo/hack/e2e.sh" down >>"$out" 2>&1 {lockfd}>&- || ok=0
		took="up $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s, down $(since "$t1") s"
	else
		"$repo/hack/e2e.sh" test -run "${LOCUS_E2E_SOAK_RUN:-.}" >"$out" 2>&1 {lockfd}>&- || ok=0
		took="$(since "$t0") s"
	fi
	times+=("$took")
	rest=$(leftovers)
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	if [ "$ok" = 1 ] && [ -z "$rest" ]; then
		flock -u "$lockfd"
		log "soak: run $r/$runs ok: $took; load $load"
		continue
	fi
	[ "$ok" = 1 ] || {
		failed=$((failed + 1))
		log "soak: run $r/$runs FAILED: $took; load $load; end of $out:"
		tail -n 20 "$out" >&2
	}
	if [ -n "$rest" ]; then
		left=$((left + 1))
		log "soak: run $r/$runs LEFT BEHIND:"
		echo "$rest" >&2
	fi
	# Go on only from a clean host, or every later run would fail for this one's sake.
	"$repo/hack/e2e.sh" down >>"$out" 2>&1 {lockfd}>&-
	rest=$(leftovers)
	[ -z "$rest" ] || die "soak: the host stays unclean after another down, stopping: $rest"
	flock -u "$lockfd"
done
log "soak: $mode x$runs with locus stress --cpu $cpu on $(nproc) CPUs: $failed failed, $left left something behind"
[ "$failed" = 0 ] && [ "$left" = 0 ]
