#!/usr/bin/env bash
# run.sh inside the NUMA test guest (test/numavm): Debian's kernel under QEMU
# TCG with 2 NUMA nodes of one CPU each, the project's static binaries, and
# bash, redis-server, redis-benchmark and redis-cli copied from the host with
# the libraries ldd names (bench/lib/guest.sh). Under Locus the server's
# cpuset.mems is then its CPU's node. Prints run.sh's output and
# summarize.sh's table; the output is also kept in
# $NUMAVM_CACHE/isolation.out (default .cache/numavm-isolation).
#
# TCG emulates every instruction, ten to a hundred times slower than the
# host: the default scale is small (ROUNDS 5, REQUESTS 2000, WARMUP 500,
# CLIENTS 10, BE_MEMBW_SIZE 64Mi; each may be set in the environment), and
# the figures compare the cases with each other, not with the host's.
# Extra arguments go to test/numavm/run.sh (--smp 4, --cgroup v1, ...).
set -euo pipefail
# shellcheck source=bench/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
bench_guest isolation TestIsolation "ISOLATION: " \
	"ROUNDS:5 REQUESTS:2000 WARMUP:500 CLIENTS:10 SETTLE:1 CPUS:1 BE_MEMBW:1 BE_MEMBW_SIZE:64Mi MEMORY_REQUEST:256Mi BE_CPUS:" "$@"
