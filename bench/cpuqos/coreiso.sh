#!/usr/bin/env bash
# Core isolation off and on, side by side: redis-server as an LS workload of
# the standalone agent owning one whole core (full-pcpus, both threads),
# with locus.io/core-isolation "false" or "true", beside a CPU-bound spinner
# the agent does not manage, pinned to the second thread of that core. The
# spinner stands for what a cpuset cannot keep off the core: a process
# outside the agent's workloads (a system daemon, a container of another
# manager) that may run on any CPU; only a core scheduling cookie keeps it
# off the LS core's sibling while the server runs. redis-benchmark runs
# unmanaged on a CPU outside that core. Each round runs both modes, in
# turn (off then on in odd rounds, on then off in even ones, so drift over
# the run falls on both), and prints CSV lines in run.sh's shape,
#   core,MODE,round,SET|GET,rps,p50_ms,p99_ms
# and one for the neighbour over the same benchmark,
#   core,MODE,round,neighbour,cpu_pct,forceidle_neighbour_ms,forceidle_ls_ms
# cpu_pct being the spinner's CPU time per wall time (its progress), and the
# forced-idle times the kernel's core_forceidle_sum (/proc/PID/sched) over
# the benchmark: how long the spinner ran while it kept the server's CPU
# idle, and how long the server's threads ran while they kept the spinner's
# CPU idle (kernel.sched_schedstats is set to 1 for the run and restored).
#
# Before each mode it waits up to 60 s for every thread of the server to
# share one cookie (on) or to have none (off), and exits 1 if not. Where the
# kernel cannot isolate a core (no CONFIG_SCHED_CORE, SMT off) it prints
# "# core scheduling: unavailable: " and locus doctor's reason, and exits 0.
#
#   ROUNDS (3), REQUESTS (100000), CLIENTS (20): the size.
#   LOCUS: a prebuilt locus binary instead of `go build`.
#   COOKIES: the test binary of test/numavm/cpuqos, which prints the cookies
#   of a process's threads (go test -c of it when unset).
#
# Needs root, cgroup v2, at least two cores with one CPU free of the LS core
# for the client, redis-server, redis-benchmark, redis-cli and numactl.
set -euo pipefail
rounds=${ROUNDS:-3} requests=${REQUESTS:-100000} clients=${CLIENTS:-20} port=${PORT:-16379}
# shellcheck source=bench/lib/redis.sh
. "$(dirname "$0")/../lib/redis.sh"
bench_redis_need coreiso
command -v numactl >/dev/null || { echo "coreiso: numactl not found (Debian: apt-get install numactl)" >&2; exit 2; }
bench_whole coreiso 1 rounds requests clients
bench_setup coreiso

# doctor FIELD prints locus doctor's FIELD (status, found) of its
# core-scheduling check.
doctor() {
	"$bin" doctor -o json 2>/dev/null | awk -v f="\"$1\"" '
		/"check": "core-scheduling"/ { on = 1 }
		on && index($0, f ":") { sub(/^[^:]*: "/, ""); sub(/",?$/, ""); print; exit }'
}
if [ "$(doctor status)" != ok ]; then
	echo "# core scheduling: unavailable: $(doctor found)"
	rm -rf "$tmp"
	exit 0
fi
if [ -z "${COOKIES:-}" ]; then
	COOKIES=$tmp/cookies
	(cd "$(dirname "$0")/../.." && go test -c -o "$COOKIES" ./test/numavm/cpuqos)
fi
[ -f /sys/fs/cgroup/cgroup.controllers ] || { echo "coreiso: needs cgroup v2 at /sys/fs/cgroup" >&2; exit 2; }

schedstats=/proc/sys/kernel/sched_schedstats
old_schedstats=$(cat "$schedstats")
cg=/sys/fs/cgroup/$parent
redis='' agent='' nb=''
cleanup() {
	[ -z "$nb" ] || kill -KILL "$nb" 2>/dev/null || true
	[ -z "$agent" ] || { kill -TERM "$agent" 2>/dev/null || true; wait "$agent" 2>/dev/null || true; }
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
	[ -z "$redis" ] || wait "$redis" 2>/dev/null || true
	[ ! -d "$cg" ] || { echo 1 >"$cg/cgroup.kill"; sleep 0.5; rmdir "$cg" 2>/dev/null || true; }
	echo "$old_schedstats" >"$schedstats"
	rm -rf "$tmp"
}
trap cleanup EXIT
echo 1 >"$schedstats"

mkdir "$cg"
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$tmp/redis.log" 2>&1 &
redis=$!
echo "$redis" >"$cg/cgroup.procs"
bench_redis_wait "$port"

# configure ON writes the agent's config (coreiso.yaml), the server asking
# for core isolation as ON (true, false) says, and renames it into place.
mkdir "$tmp/conf"
configure() {
	sed -e "s|@CGROUP@|$parent|" -e "s|@ISOLATE@|$1|" "$(dirname "$0")/coreiso.yaml" >"$tmp/conf/.host.yaml"
	mv "$tmp/conf/.host.yaml" "$tmp/conf/host.yaml"
}
configure false
"$bin" agent --standalone --config "$tmp/conf/host.yaml" --state-dir "$tmp/state" \
	--metrics-addr "" --resync 1h --config-settle 200ms >"$tmp/agent.log" 2>&1 &
agent=$!

# await WHAT TIMEOUT CMD... polls CMD every 0.2 s until it succeeds, or
# exits 1 naming WHAT with the agent's log.
await() {
	local what=$1 limit=$2 deadline=$((SECONDS + $2))
	shift 2
	until "$@"; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "coreiso: not $what within $limit s; agent log:" >&2
			tail -20 "$tmp/agent.log" >&2
			exit 1
		fi
		sleep 0.2
	done
}
core_cpus() { [ "$(cat "$cg/cpuset.cpus" 2>/dev/null)" != "" ]; }
await "given a cpuset by the agent" 60 core_cpus
ls_cpus=$(cat "$cg/cpuset.cpus")
# The spinner goes on the last CPU of the server's core, the client on the
# last CPU outside it.
first=${ls_cpus%%[-,]*}
siblings=$(cat "/sys/devices/system/cpu/cpu$first/topology/thread_siblings_list")
[ "$siblings" = "$ls_cpus" ] || { echo "coreiso: the server's cpuset $ls_cpus is not the core $siblings" >&2; exit 1; }
nb_cpu=${ls_cpus##*[-,]}
client_cpu=
for f in /sys/devices/system/cpu/cpu[0-9]*; do
	c=${f##*cpu}
	[ "$c" -ge "$first" ] && [ "$c" -le "$nb_cpu" ] || [ "${client_cpu:-0}" -gt "$c" ] || client_cpu=$c
done
[ -n "$client_cpu" ] || { echo "coreiso: no CPU outside the server's core $ls_cpus for the client" >&2; exit 1; }

# cookie_is WANT succeeds when the server's threads' cookies say WANT
# (none, shared).
cookie_is() {
	local got
	got=$(NUMAVM_CPUQOS_COOKIES=1 "$COOKIES" "$redis")
	last_cookie=$got
	[ "${got%% *}" = "$1" ]
}

# sched PID FIELD sums FIELD of /proc/PID/sched over the process's threads.
sched() {
	cat /proc/"$1"/task/*/sched | awk -v k="$2" '$1 == k { t += $3 } END { printf "%.3f\n", t }'
}

echo "# $(bench_machine), smt/active $(cat /sys/devices/system/cpu/smt/active);" \
	"layout core, rounds $rounds, requests $requests, clients $clients"
echo "# server: the agent's workload ls, cpuset.cpus $ls_cpus (a whole core), cpuset.mems $(cat "$cg/cpuset.mems");" \
	"neighbour: unmanaged spinner on CPU $nb_cpu; client: unmanaged on CPU $client_cpu"
# Isolation once before the rounds: a cookie read back as nonzero shows the
# kernel reports cookies (it reads every one as 0 until its RNG is ready), so
# "none" later means none.
configure true
await "one cookie on every server thread" 60 cookie_is shared
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "layout,mode,round,test,rps,p50_ms,p99_ms"
for round in $(seq "$rounds"); do
	for mode in $(bench_order "$round" off on); do
		if [ "$mode" = on ]; then
			configure true
			await "one cookie on every server thread" 60 cookie_is shared
		else
			configure false
			await "no cookie on any server thread" 60 cookie_is none
		fi
		numactl --physcpubind="$nb_cpu" sh -c 'while :; do :; done' &
		nb=$!
		sleep 1 # the neighbour is burning before the client starts
		echo "# round $round $mode: server cookie ${last_cookie%% *}, load average $(cut -d' ' -f1-3 /proc/loadavg)"
		# The wall time brackets the spinner's run time: reading /proc
		# takes a while under TCG.
		nb_fi0=$(sched "$nb" core_forceidle_sum) ls_fi0=$(sched "$redis" core_forceidle_sum)
		t0=$EPOCHREALTIME nb_run0=$(sched "$nb" se.sum_exec_runtime)
		numactl --physcpubind="$client_cpu" redis-benchmark -p "$port" -t set,get -n "$requests" -c "$clients" --csv |
			bench_redis_rows "core,$mode,$round"
		nb_run1=$(sched "$nb" se.sum_exec_runtime) t1=$EPOCHREALTIME
		nb_fi1=$(sched "$nb" core_forceidle_sum) ls_fi1=$(sched "$redis" core_forceidle_sum)
		kill -KILL "$nb"
		wait "$nb" 2>/dev/null || true
		nb=
		awk -v p="core,$mode,$round" -v t0="$t0" -v t1="$t1" -v r0="$nb_run0" -v r1="$nb_run1" \
			-v n0="$nb_fi0" -v n1="$nb_fi1" -v l0="$ls_fi0" -v l1="$ls_fi1" 'BEGIN {
			printf "%s,neighbour,%.1f,%.1f,%.1f\n", p, (r1 - r0) / 10 / (t1 - t0), n1 - n0, l1 - l0 }'
	done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
