#!/usr/bin/env bash
# CPU QoS side by side: redis-server (LS) and redis-benchmark (LS) beside a
# CPU-bound BE neighbour (`locus stress`), each started with `locus run`.
# Rounds alternate, in one run, between no neighbour, the neighbour at the
# default weight (--cpu-qos none: cpu.shares 1024, cpu.idle 0, what a BE run
# got before CPU QoS) and the neighbour SCHED_IDLE (--cpu-qos auto: cpu.idle
# 1, or cpu.shares 2 where the kernel lacks cpu.idle). It prints one CSV line
# per round and test: layout,mode,round,test,rps,p50_ms,p99_ms.
#
#   LAYOUT=pinned  redis-server on a CPU of its own (--cpus 1); the client
#                  and the neighbour share the rest (the default)
#   LAYOUT=shared  redis-server, client and neighbour all in the shared pool
#   ROUNDS (3), REQUESTS (100000), CLIENTS (20), BE_CPUS (2): the size.
#   LOCUS: a prebuilt locus binary instead of `go build` (the NUMA guest,
#   bench/cpuqos/guest.sh).
#
# Each round checks the neighbour's cgroup (cpu.idle 0 at the default weight,
# 1 when idle, where the kernel has the file; exit 1 otherwise) and says it,
# the server's CPUs and the load average in # lines.
#
# Needs root, redis-server, redis-benchmark and redis-cli (Debian:
# redis-server, redis-tools), and Go to build locus unless LOCUS is set.
# Everything runs under a cgroup parent of its own, removed by `locus run` as
# each command exits.
set -euo pipefail
layout=${LAYOUT:-pinned} rounds=${ROUNDS:-3} requests=${REQUESTS:-100000}
clients=${CLIENTS:-20} be_cpus=${BE_CPUS:-2} port=${PORT:-16379}
case $layout in
pinned | shared) ;;
*) echo "cpuqos: LAYOUT=$layout: want pinned or shared" >&2; exit 2 ;;
esac
# shellcheck source=bench/lib/redis.sh
. "$(dirname "$0")/../lib/redis.sh"
bench_redis_need cpuqos
bench_whole cpuqos 1 rounds requests clients be_cpus
bench_setup cpuqos

redis_pin=()
[ "$layout" = pinned ] && redis_pin=(--cpus 1)
(run "${redis_pin[@]}" --qos LS -- redis-server --port "$port" --bind 127.0.0.1 \
	--save '' --appendonly no >"$tmp/redis.log" 2>&1) &
redis=$! be=
cleanup() {
	[ -z "$be" ] || kill -TERM "$be" 2>/dev/null || true
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
	wait "$redis" 2>/dev/null || true
	rm -rf "$tmp"
	# The runs remove their own cgroups; the parent they shared is left empty.
	rmdir /sys/fs/cgroup/*/"$parent" /sys/fs/cgroup/"$parent" 2>/dev/null || true
}
trap cleanup EXIT
bench_redis_wait "$port"
echo "# $(bench_machine); layout $layout, rounds $rounds," \
	"requests $requests, clients $clients, neighbour: locus stress --cpu $be_cpus"
echo "# server: cpuset.cpus $(bench_cgroup_read "$parent/run-$redis" cpuset.cpus)," \
	"cpuset.mems $(bench_cgroup_read "$parent/run-$redis" cpuset.mems)"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "layout,mode,round,test,rps,p50_ms,p99_ms"
for round in $(seq "$rounds"); do
	for mode in alone default idle; do
		be=
		case $mode in
		default) (run --qos BE --cpu-qos none -- "$bin" stress --cpu "$be_cpus" >/dev/null 2>&1) & be=$! ;;
		idle) (run --qos BE --cpu-qos auto -- "$bin" stress --cpu "$be_cpus" >/dev/null 2>&1) & be=$! ;;
		esac
		if [ -n "$be" ]; then
			sleep 1 # the neighbour is burning before the client starts
			idle=$(bench_cgroup_read "$parent/run-$be" cpu.idle)
			echo "# round $round $mode: neighbour cgroup run-$be cpu.idle $idle," \
				"load average $(cut -d' ' -f1-3 /proc/loadavg)"
			want=0
			[ "$mode" = default ] || want=1
			if [ "$idle" != absent ] && [ "$idle" != "$want" ]; then
				echo "cpuqos: round $round $mode: the neighbour's cpu.idle is $idle, want $want" >&2
				exit 1
			fi
		fi
		(run --qos LS -- redis-benchmark -p "$port" -t set,get -n "$requests" -c "$clients" --csv) |
			bench_redis_rows "$layout,$mode,$round"
		if [ -n "$be" ]; then
			kill -TERM "$be"
			wait "$be" 2>/dev/null || true
		fi
	done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
