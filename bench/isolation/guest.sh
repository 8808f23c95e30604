#!/usr/bin/env bash
# run.sh inside the NUMA test guest (test/numavm): Debian's kernel under QEMU
# TCG with 2 NUMA nodes of one CPU each, the project's static binaries, and
# bash, redis-server, redis-benchmark and redis-cli copied from the host with
# the libraries ldd names. Under Locus the server's cpuset.mems is then its
# CPU's node. Prints run.sh's output and summarize.sh's table; the output is
# also kept in $NUMAVM_CACHE/isolation.out.
#
# TCG emulates every instruction, ten to a hundred times slower than the
# host: the default scale is small (ROUNDS 5, REQUESTS 2000, WARMUP 500,
# CLIENTS 10, BE_MEMBW_SIZE 64Mi; each may be set in the environment), and
# the figures compare the cases with each other, not with the host's.
# Extra arguments go to test/numavm/run.sh (--smp 4, --cgroup v1, ...).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
# A cache of its own: a concurrent test run must not clobber this initramfs.
export NUMAVM_CACHE=${NUMAVM_CACHE:-$repo/.cache/numavm-isolation}
mkdir -p "$NUMAVM_CACHE"
append=
for v in ROUNDS:5 REQUESTS:2000 WARMUP:500 CLIENTS:10 SETTLE:1 CPUS:1 BE_MEMBW:1 BE_MEMBW_SIZE:64Mi MEMORY_REQUEST:256Mi BE_CPUS:; do
	name=${v%%:*} def=${v#*:}
	val=${!name:-$def}
	[ -z "$val" ] || append="$append numavm.${name,,}=$val"
done
status=0
bash test/numavm/run.sh --nodes 2 --smp 2 --mem 2G --quiet \
	--pkgs ./test/numavm/isolation --run TestIsolation \
	--bins "bash redis-server redis-benchmark redis-cli" --files "bench/isolation bench/lib" \
	--test-timeout 60m --timeout 4000 --append "$append" "$@" || status=$?
tr -d '\r' <"$NUMAVM_CACHE/console.log" | sed -n 's/^ISOLATION: //p' >"$NUMAVM_CACHE/isolation.out"
cat "$NUMAVM_CACHE/isolation.out"
if [ -s "$NUMAVM_CACHE/isolation.out" ]; then
	echo
	bash bench/isolation/summarize.sh "$NUMAVM_CACHE/isolation.out"
fi
exit "$status"
