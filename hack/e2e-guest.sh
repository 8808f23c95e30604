#!/usr/bin/env bash
# The end-to-end node on cgroup v2 with two NUMA nodes: the same node as
# hack/e2e.sh's (hack/e2e-up.sh: etcd, kube-apiserver, kube-controller-manager,
# the kubelet, containerd 2 with NRI, runc, the agent and locus-scheduler as
# processes) brought up inside a QEMU guest by test/numavm/run.sh, which boots
# Debian's kernel on cgroup2 with 2 NUMA nodes of 4 CPUs. The test binary of test/e2e
# brings the node up itself (LOCUS_E2E_UP=1) and runs the tests named by -run
# (default: the ones written for this node). docs/e2e.md.
#
#   hack/e2e-guest.sh [-run REGEX]
set -euo pipefail
# shellcheck source=hack/e2e-lib.sh
. "$(dirname "$0")/e2e-lib.sh"
cd "$repo"

run='TestGuest'
while [ $# -gt 0 ]; do
	case "$1" in
	-run) run=$2; shift 2 ;;
	*) die "usage: hack/e2e-guest.sh [-run REGEX]" ;;
	esac
done

hack/build-controlplane.sh
LOCUS_E2E_RUNTIME=containerd2 hack/e2e-build.sh
# runc from Debian, copied in with its libraries.
apt_install runc

rel() { realpath --relative-to="$repo" "$1"; }
files=(hack deploy/helm/locus/crds internal/kubetest/testdata pkg/kube/nodeagent/testdata pkg/scheduler/integration/testdata)
for b in etcd kube-apiserver kubectl; do files+=("$(rel "$CP_BIN/$b")"); done
for b in kubelet kube-controller-manager locus locus-scheduler; do files+=("$(rel "$E2E_BIN/$b")"); done
for b in containerd containerd-shim-runc-v2 ctr; do files+=("$(rel "$CTRD2_BIN/$b")"); done
files+=("$(rel "$E2E_IMAGES/pause.tar")" "$(rel "$E2E_IMAGES/workload.tar")")

# What hack/e2e-lib.sh runs that the guest's busybox lacks or does differently:
# bash, date +%N, setsid --fork, ip netns, and the TLS tools.
bins="bash date setsid nsenter ip openssl curl runc"

# No pod network (LOCUS_E2E_CNI=none): the guest's tests run host-network pods.
env=(LOCUS_E2E=1 LOCUS_E2E_UP=1 LOCUS_E2E_REPO=/src LOCUS_E2E_MODE=host LOCUS_E2E_RUNTIME=containerd2 LOCUS_E2E_CNI=none
	LOCUS_E2E_SNAPSHOTTER=native LOCUS_E2E_NO_PIVOT=1 LOCUS_E2E_NODE_LINK=lo LOCUS_E2E_WAIT_SCALE=6)
exec bash test/numavm/run.sh --nodes 2 --smp 8 --mem 4G --timeout "${LOCUS_E2E_GUEST_TIMEOUT:-1500}" \
	--test-timeout 20m --pkgs ./test/e2e --run "$run" --bins "$bins" --files "${files[*]}" --env "${env[*]}"
