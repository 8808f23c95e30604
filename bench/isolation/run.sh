#!/usr/bin/env bash
# Isolation of a latency-sensitive server: redis-server (LS), measured by
# redis-benchmark, alone and beside a BE neighbour (`locus stress`) that
# saturates the CPUs and memory bandwidth. Three cases per round, one after
# the other, their order reversed every other round:
#
#   alone    the server and the client, no neighbour, nothing pinned
#   shared   the neighbour too, everything shared at default values: what
#            kubelet's `none` CPU manager policy gives (no pinning, cpu.shares
#            1024, cpu.idle 0, no memory QoS)
#   locus    the server on CPUS CPUs of its own (`locus run --cpus`, memory
#            QoS auto) and the neighbour in the BE pool with CPU QoS auto
#            (cpu.idle 1)
#
# The client runs as an LS process in the shared pool in every case, as
# another LS pod would: in `shared` it competes with the neighbour at equal
# weight, under Locus the neighbour yields it the CPU (cpu.idle). It never
# gets the server's CPUs, so it cannot take from the server what Locus gave.
#
# Each case starts a fresh server (and neighbour), waits SETTLE seconds, runs
# a warm-up of WARMUP requests that is not measured, checks the cgroup values
# the case asks for (exit 1 if they differ) and prints them as # lines, then
# prints one CSV row per test: case,round,test,rps,p50_ms,p99_ms, and as #
# lines the load average before and how often the server was preempted
# (involuntary context switches) during the measurement.
# summarize.sh turns the rows into medians and per-round ratios to `alone`.
#
#   ROUNDS (5), REQUESTS (100000), WARMUP (20000), CLIENTS (20), SETTLE (1),
#   CPUS (1): the server's own CPUs in `locus`,
#   BE_CPUS (the machine's CPUs), BE_MEMBW (1), BE_MEMBW_SIZE (128Mi): the
#   neighbour's `locus stress --cpu BE_CPUS --mem-bw BE_MEMBW`,
#   MEMORY_REQUEST (256Mi): the server's --memory-request under memory QoS,
#   LOCUS: a prebuilt locus binary instead of `go build` (the NUMA guest).
#
# Needs root, bash, redis-server, redis-benchmark and redis-cli (Debian:
# apt-get install redis-server redis-tools; stop the packaged service or it
# holds the port only if PORT is 6379) and Go unless LOCUS is set. Everything
# runs under a cgroup parent of its own, removed as each command exits. Other
# heavy work on the machine shows in the figures: run it alone.
set -euo pipefail
rounds=${ROUNDS:-5} requests=${REQUESTS:-100000} warmup=${WARMUP:-20000}
clients=${CLIENTS:-20} settle=${SETTLE:-1} cpus=${CPUS:-1} port=${PORT:-16380}
be_cpus=${BE_CPUS:-$(nproc)} be_membw=${BE_MEMBW:-1} be_membw_size=${BE_MEMBW_SIZE:-128Mi}
mem_request=${MEMORY_REQUEST:-256Mi}
# shellcheck source=bench/lib/redis.sh
. "$(dirname "$0")/../lib/redis.sh"
bench_redis_need isolation
bench_whole isolation 1 rounds requests clients cpus
bench_whole isolation 0 warmup be_cpus be_membw
bench_setup isolation

server='' be=''
stop() { # stop PID: SIGTERM to a `locus run`, which passes it on
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
cleanup() {
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
	stop "$server"
	stop "$be"
	rm -rf "$tmp"
	rmdir /sys/fs/cgroup/*/"$parent" /sys/fs/cgroup/"$parent" 2>/dev/null || true
}
trap cleanup EXIT

# show CG FILE... prints "FILE=VALUE" for each file of CG.
show() {
	local cg=$1 f
	shift
	for f in "$@"; do printf ' %s=%s' "$f" "$(bench_cgroup_read "$cg" "$f")"; done
}
# expect WHAT GOT WANT fails the run when a cgroup value is not the case's.
expect() {
	[ "$2" = "$3" ] && return 0
	echo "isolation: $1 is $2, want $3" >&2
	exit 1
}

# check CASE ROUND prints the server's and the neighbour's cgroup values and
# checks those the case is about.
check() {
	local case=$1 round=$2 s=$parent/run-$server b=$parent/run-$be scpus bcpus
	scpus=$(bench_cgroup_read "$s" cpuset.cpus)
	echo "# round $round $case: server$(show "$s" cpuset.cpus cpuset.mems cpu.shares cpu.idle memory.wmark_ratio memory.min memory.low)"
	[ -z "$be" ] || echo "# round $round $case: neighbour$(show "$b" cpuset.cpus cpuset.mems cpu.shares cpu.idle)"
	case $case in
	alone | shared)
		expect "server cpuset.cpus" "$scpus" "$(cat /sys/devices/system/cpu/online)"
		expect "server cpu.idle" "$(bench_cgroup_read "$s" cpu.idle)" 0
		;;
	locus)
		expect "server cpu count" "$(cpu_count "$scpus")" "$cpus"
		# On more than one node the server's memory is on its CPUs' node.
		[ "$(bench_numa_nodes)" -le 1 ] || expect "server cpuset.mems" "$(bench_cgroup_read "$s" cpuset.mems)" "$(cpu_node "${scpus%%[-,]*}")"
		expect "server memory.wmark_ratio (memory QoS)" "$(bench_cgroup_read "$s" memory.wmark_ratio)" \
			"$(wmark_want "$s")"
		bcpus=$(bench_cgroup_read "$b" cpuset.cpus)
		expect "neighbour cpu.idle" "$(bench_cgroup_read "$b" cpu.idle)" 1
		overlap "$scpus" "$bcpus" && expect "neighbour cpuset.cpus" "$bcpus" "no CPU of the server's $scpus"
		;;
	esac
	if [ "$case" = shared ]; then
		expect "neighbour cpu.idle" "$(bench_cgroup_read "$b" cpu.idle)" 0
		expect "neighbour cpuset.cpus" "$(bench_cgroup_read "$b" cpuset.cpus)" "$scpus"
	fi
}
# cpu_node CPU prints the NUMA node of CPU.
cpu_node() {
	local n
	for n in /sys/devices/system/cpu/cpu"$1"/node*; do echo "${n##*/node}"; done
}
# cpu_count LIST counts the CPUs of a Linux CPU list (0-1,4).
cpu_count() {
	echo "$1" | tr ',' '\n' | awk -F- '{ n += NF == 2 ? $2 - $1 + 1 : 1 } END { print n }'
}
# overlap A B: whether two CPU lists share a CPU.
overlap() {
	# shellcheck disable=SC2016 # awk's own variables
	awk -v a="$1" -v b="$2" '
	function expand(list, set,   n, r, i, e, c) {
		n = split(list, r, ",")
		for (i = 1; i <= n; i++) { split(r[i], e, "-"); if (e[2] == "") e[2] = e[1]; for (c = e[1] + 0; c <= e[2] + 0; c++) set[c] = 1 }
	}
	BEGIN { expand(a, A); expand(b, B); for (c in A) if (c in B) exit 0; exit 1 }'
}
# wmark_want CG: memory QoS writes memory.wmark_ratio 95 where the kernel has
# it (Anolis); upstream kernels have no such file.
wmark_want() {
	if [ "$(bench_cgroup_read "$1" memory.wmark_ratio)" = absent ]; then echo absent; else echo 95; fi
}

# preemptions PID: the involuntary context switches of all PID's threads, how
# often something else took the CPU from the server while it could run.
preemptions() {
	cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^nonvoluntary_ctxt_switches/ { n += $2 } END { print n + 0 }'
}
start_server() { # start_server LOCUS-RUN-FLAGS...
	(run "$@" -- redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		>"$tmp/redis.log" 2>&1) &
	server=$!
	bench_redis_wait "$port"
}
start_neighbour() { # start_neighbour LOCUS-RUN-FLAGS...
	(run "$@" -- "$bin" stress --cpu "$be_cpus" --mem-bw "$be_membw" --mem-bw-size "$be_membw_size" \
		>"$tmp/stress.log" 2>&1) &
	be=$!
}
client() { # client REQUESTS: the benchmark, as an LS run in the shared pool
	(run --qos LS -- redis-benchmark -p "$port" -t set,get -n "$1" -c "$clients" --csv)
}

one_case() {
	local case=$1 round=$2
	case $case in
	alone) start_server --qos LS --cpu-qos none --memory-qos none ;;
	shared)
		start_server --qos LS --cpu-qos none --memory-qos none
		start_neighbour --qos BE --cpu-qos none --memory-qos none
		;;
	locus)
		# The server first: its CPUs are then a lease the BE pool leaves out.
		start_server --cpus "$cpus" --qos LS --memory-qos auto --memory-request "$mem_request"
		start_neighbour --qos BE --cpu-qos auto
		;;
	esac
	sleep "$settle"
	[ "$warmup" -eq 0 ] || client "$warmup" >/dev/null
	check "$case" "$round"
	local pid cs0
	pid=$(redis-cli -p "$port" info server | tr -d '\r' | sed -n 's/^process_id://p')
	cs0=$(preemptions "$pid")
	echo "# round $round $case: load average $(cut -d' ' -f1-3 /proc/loadavg)"
	client "$requests" | bench_redis_rows "$case,$round"
	echo "# round $round $case: server preempted $(($(preemptions "$pid") - cs0)) times while measured"
	if [ -n "$be" ]; then
		kill -0 "$be" 2>/dev/null || { echo "isolation: the neighbour exited early:" >&2; cat "$tmp/stress.log" >&2; exit 1; }
		stop "$be"
		be=
		echo "# round $round $case: neighbour $(sed -n 's/^locus stress: //p' "$tmp/stress.log")"
	fi
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
	stop "$server"
	server=
}

echo "# $(bench_machine)"
echo "# rounds $rounds, requests $requests, warm-up $warmup, clients $clients, server CPUs $cpus," \
	"neighbour: locus stress --cpu $be_cpus --mem-bw $be_membw --mem-bw-size $be_membw_size"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "case,round,test,rps,p50_ms,p99_ms"
for round in $(seq "$rounds"); do
	for case in $(bench_order "$round" alone shared locus); do
		one_case "$case" "$round"
	done
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
