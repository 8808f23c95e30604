# shellcheck shell=bash
# Shared by the redis benchmarks' guest.sh (cpuqos, isolation): boots the
# NUMA test guest (test/numavm) with bash and redis copied in from the host
# and the benchmark's scripts under /src, and runs the benchmark's guest test
# package there. Source it and call bench_guest.

# bench_guest NAME TEST PREFIX SETTINGS [ARGS...] runs TEST of
# ./test/numavm/NAME in a guest of 2 NUMA nodes with one vCPU each, with
# bench/NAME and bench/lib under /src. Each NAME:DEFAULT of SETTINGS is
# passed as the kernel parameter numavm.name=VALUE, VALUE being the
# environment's $NAME or else DEFAULT (none when both are empty). ARGS go to
# test/numavm/run.sh after these and so win (--smp 4, --cgroup v1; an
# --append of its own replaces the settings). The guest gets a cache of its
# own, $NUMAVM_CACHE (default .cache/numavm-NAME): a concurrent test run must
# not clobber its initramfs. The lines the script printed (the console's
# lines behind PREFIX) are kept in $NUMAVM_CACHE/NAME.out, between the host's
# load average before and after, then printed with bench/NAME/summarize.sh's
# table of them. Returns test/numavm/run.sh's status.
bench_guest() {
	local name=$1 test=$2 prefix=$3 settings=$4 repo append='' v var val start status=0 out
	shift 4
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	cd "$repo" || return
	export NUMAVM_CACHE=${NUMAVM_CACHE:-$repo/.cache/numavm-$name}
	mkdir -p "$NUMAVM_CACHE"
	out=$NUMAVM_CACHE/$name.out
	for v in $settings; do
		var=${v%%:*}
		val=${!var:-${v#*:}}
		[ -z "$val" ] || append="$append numavm.${var,,}=$val"
	done
	start=$(date +%s)
	echo "# host load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >"$out.host"
	bash test/numavm/run.sh --nodes 2 --smp 2 --mem 2G --quiet \
		--pkgs "./test/numavm/$name" --run "$test" \
		--bins "bash redis-server redis-benchmark redis-cli" --files "bench/$name bench/lib" \
		--test-timeout 60m --timeout 4000 --append "$append" "$@" || status=$?
	echo "# host load average at end: $(cut -d' ' -f1-3 /proc/loadavg), $(($(date +%s) - start)) s" >>"$out.host"
	{
		sed -n 1p "$out.host"
		tr -d '\r' <"$NUMAVM_CACHE/console.log" | sed -n "s/^$prefix//p"
		sed -n 2p "$out.host"
	} >"$out"
	rm -f "$out.host"
	cat "$out"
	if grep -q '^[a-z]*,' "$out"; then
		echo
		bash "bench/$name/summarize.sh" "$out"
	fi
	return "$status"
}
