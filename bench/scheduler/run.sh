#!/usr/bin/env bash
# locus-scheduler at scale against kube-scheduler v1.33 (the same version,
# without the plugin), in one run on a real kube-apiserver and etcd with
# kwok nodes: each node a 192-CPU two-socket machine with its
# NodeResourceTopology published, half the pods cpuset-scheduler (1-16
# whole CPUs), half plain. Both schedulers get the same pods (the
# annotation left out for kube-scheduler), the same nodes emptied between
# passes and the same client limits, in alternating order. Prints the
# SCALE lines: pods/s from the first creation to the last binding,
# create->bound and scheduling-attempt percentiles, CPU per process, and
# the ratios.
#
#   bench/scheduler/run.sh          quick: 100 nodes, 500 pods, 2 rounds
#   bench/scheduler/run.sh --full   the recorded size: 1000 nodes, 5000 pods
#   bench/scheduler/run.sh --koord  against koord-scheduler (Koordinator's,
#                                   built by bench/scheduler/koord.sh) instead
#                                   of kube-scheduler; with --full, both
#
# Against koord-scheduler the cpuset pods are LSR pods of the koord-prod
# priority class (Koordinator's protocol), each node's report also carries
# koordlet's CPU-topology and kubelet-policy annotations, and the nodes the
# single-NUMA-node policy label; the pass lines add, for both, the pods on
# one NUMA node, the pods sharing a core and the pods refused once.
#
# LOCUS_SCHED_CREATE=ahead creates every pod before each scheduler starts
# (its own throughput, start-up included) instead of while it runs;
# LOCUS_SCHED_{NODES,PODS,ROUNDS,QPS,BURST,CREATORS,RATE,SEED,SETTLE_S,TIMEOUT_S,V,PEER}
# override the size and conditions; LOCUS_SCHED_MIN_RATIO=0.9 makes the
# test fail below that throughput ratio; LOCUS_SCHED_TRACE=DIR and
# LOCUS_SCHED_CPUPROFILE=DIR write each pass's per-pod times and CPU
# profile, LOCUS_SCHED_MEMPROFILE=DIR its heap profile at the pass's end
# (the scheduler's live heap, printed in each pass line, is the live Go
# heap after a collection with the scheduler running, less the same after
# it stopped). The control-plane binaries come from hack/build-controlplane.sh.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
for arg in "$@"; do
	case "$arg" in
	--full)
		export LOCUS_SCHED_NODES=${LOCUS_SCHED_NODES:-1000} LOCUS_SCHED_PODS=${LOCUS_SCHED_PODS:-5000}
		;;
	--koord)
		export LOCUS_SCHED_PEER=koord-scheduler
		;;
	*)
		echo "usage: $0 [--full] [--koord]" >&2
		exit 2
		;;
	esac
done
"$repo/hack/build-controlplane.sh" >/dev/null
if [ "${LOCUS_SCHED_PEER:-}" = koord-scheduler ]; then
	"$repo/bench/scheduler/koord.sh" >/dev/null
fi
LOCUS_SCHED_SCALE=1 "${GO:-go}" test -count=1 -timeout 180m -run '^TestSchedulerScale$' -v ./pkg/scheduler/scale/
