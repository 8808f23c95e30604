# shellcheck shell=bash
# Shared by the redis benchmarks (cpuqos/run.sh, isolation/run.sh): building
# locus, checking their settings and commands, reading a run's cgroup files,
# waiting for redis-server and turning redis-benchmark's CSV into the
# benchmarks' rows. Source it; only bench_setup sets variables.

# bench_setup NAME makes the run's directory ($tmp), puts locus in $bin
# (bench_locus) and names the cgroup parent the run's commands share
# ($parent: locus-bench-NAME-PID).
bench_setup() {
	tmp=$(mktemp -d)
	bin=$tmp/locus
	bench_locus "$bin"
	parent=locus-bench-$1-$$
}

# run ARGS... is `locus run ARGS...` under $parent. It execs: run in a
# subshell, `(run ... ) &`, $! is then `locus run` itself, which passes
# SIGTERM on, and its pid names the cgroup: $parent/run-$!.
run() { exec "$bin" run --state-dir "$tmp/state" --cgroup-parent "$parent" "$@"; }

# bench_locus OUT builds cmd/locus into OUT, or copies $LOCUS there when set
# (a prebuilt binary: the NUMA guest has no Go toolchain).
bench_locus() {
	local out=$1 repo
	if [ -n "${LOCUS:-}" ]; then
		cp "$LOCUS" "$out"
		return
	fi
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	(cd "$repo" && go build -o "$out" ./cmd/locus)
}

# bench_cgroup_read CGROUP FILE prints FILE of CGROUP (relative to the cgroup
# root) from the v1 hierarchy its controller names, or from cgroup2, or
# "absent" when the kernel has no such file.
bench_cgroup_read() {
	local cg=$1 file=$2 ctrl=${2%%.*} f
	for f in /sys/fs/cgroup/"$ctrl"/"$cg"/"$file" /sys/fs/cgroup/"$cg"/"$file"; do
		if [ -r "$f" ]; then
			cat "$f"
			return
		fi
	done
	echo absent
}

# bench_whole SCRIPT MIN VAR... exits 2, naming SCRIPT, the variable in
# upper case and its value, when a VAR (a variable's name) is not a whole
# number of at least MIN.
bench_whole() {
	local script=$1 min=$2 v
	shift 2
	for v in "$@"; do
		case ${!v} in
		'' | *[!0-9]* | 0?*) ;;
		*) [ "${!v}" -lt "$min" ] || continue ;;
		esac
		echo "$script: ${v^^}=${!v}: want a whole number of at least $min" >&2
		exit 2
	done
}

# bench_redis_need SCRIPT exits 2, naming SCRIPT and the package, when a
# redis command the benchmarks run is missing.
bench_redis_need() {
	local c
	for c in redis-server redis-benchmark redis-cli; do
		command -v "$c" >/dev/null && continue
		echo "$1: $c not found (Debian: apt-get install redis-server redis-tools)" >&2
		exit 2
	done
}

# bench_redis_wait PORT waits up to 10 s for redis-server to answer.
bench_redis_wait() {
	local _
	for _ in $(seq 100); do
		redis-cli -p "$1" ping >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "redis-server on port $1 did not answer within 10 s" >&2
	return 1
}

# bench_redis_rows PREFIX reads `redis-benchmark --csv` and prints
# PREFIX,test,rps,p50_ms,p99_ms per test.
bench_redis_rows() {
	awk -F, -v p="$1" 'NR > 1 { gsub(/"/, ""); print p "," $1 "," $2 "," $5 "," $7 }'
}

# bench_numa_nodes prints how many NUMA nodes the machine has.
bench_numa_nodes() {
	find /sys/devices/system/node -maxdepth 1 -name 'node[0-9]*' 2>/dev/null | wc -l
}

# bench_machine prints the kernel, the CPUs and the NUMA nodes, for a
# benchmark's first # line.
bench_machine() {
	echo "$(uname -r), $(nproc) CPUs, $(bench_numa_nodes) NUMA node(s)"
}

# bench_order ROUND CASE... prints the cases in their order in odd rounds
# and reversed in even ones, so drift over a run falls on all of them.
bench_order() {
	local round=$1 out='' c
	shift
	if [ $((round % 2)) = 1 ]; then
		echo "$*"
		return
	fi
	for c in "$@"; do out="$c${out:+ $out}"; done
	echo "$out"
}
