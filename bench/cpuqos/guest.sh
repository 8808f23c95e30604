#!/usr/bin/env bash
# run.sh inside the NUMA test guest (test/numavm), both layouts one after the
# other, then coreiso.sh (the layout "core"): Debian's kernel under QEMU TCG with 2 NUMA nodes of one vCPU each,
# the project's static binaries, and bash, redis-server, redis-benchmark and
# redis-cli copied from the host with the libraries ldd names
# (bench/lib/guest.sh). Prints run.sh's output and summarize.sh's table; the
# output is also kept in $NUMAVM_CACHE/cpuqos.out (default
# .cache/numavm-cpuqos), between the host's load average before and after.
#
# Two vCPUs, as on the host the benchmark was first run on: the pinned
# server gets one, the client and the neighbour's two spinners share the
# other. TCG runs each vCPU as a host thread, so more vCPUs than the host's
# CPUs would be time-shared by the host behind the guest scheduler's back.
#
# TCG emulates every instruction, ten to a hundred times slower than the
# host: the default scale is small (ROUNDS 7, REQUESTS 10000, CLIENTS 10,
# BE_CPUS 2; each may be set in the environment, and LAYOUTS,
# pinned,shared,core by default), and the
# figures compare the modes with each other, not with the host's.
#
# The core layout needs a kernel with core scheduling and SMT, which
# Debian's has not: there it says "core scheduling: unavailable" and skips.
# It is measured with
#   LAYOUTS=core bench/cpuqos/guest.sh --kernel ubuntu --threads 2 --tcg single --smp 4
# (two cores of two threads, one a node; CPU 0 is the agent's reserved CPU,
# the server gets the core 2-3, the client CPU 1). --tcg single runs all
# four vCPUs on one host thread, so the guest takes one host CPU.
# Extra arguments go to test/numavm/run.sh after these (--smp 4, --cgroup v1,
# another kernel), and BE_CPUS may follow the vCPUs.
set -euo pipefail
# shellcheck source=bench/lib/guest.sh
. "$(dirname "$0")/../lib/guest.sh"
bench_guest cpuqos TestCPUQoS "CPUQOS: " \
	"ROUNDS:7 REQUESTS:10000 CLIENTS:10 BE_CPUS:2 LAYOUTS:" "$@"
