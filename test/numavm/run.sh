#!/usr/bin/env bash
# Boots a multi-NUMA Linux guest under QEMU (TCG) and runs the project's Go test
# binaries inside it. The host needs no NUMA and no cgroup v2: the guest kernel
# provides both. Exits with the tests' status; see test/numavm/README.md.
set -euo pipefail
shopt -s inherit_errexit

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"

# Settings: flags override environment, environment overrides defaults.
NUMAVM_NODES="${NUMAVM_NODES:-2}"
NUMAVM_MEM="${NUMAVM_MEM:-2G}"
NUMAVM_SMP="${NUMAVM_SMP:-4}"
NUMAVM_THREADS="${NUMAVM_THREADS:-1}"
NUMAVM_KERNEL="${NUMAVM_KERNEL:-debian}"
NUMAVM_TCG="${NUMAVM_TCG:-multi}"
NUMAVM_CGROUP="${NUMAVM_CGROUP:-v2}"
NUMAVM_NUMA_BALANCING="${NUMAVM_NUMA_BALANCING:-off}"
NUMAVM_TIMEOUT="${NUMAVM_TIMEOUT:-600}"
NUMAVM_TEST_TIMEOUT="${NUMAVM_TEST_TIMEOUT:-5m}"
NUMAVM_RUN="${NUMAVM_RUN:-}"
NUMAVM_TEST_ARGS="${NUMAVM_TEST_ARGS:-}"
NUMAVM_APPEND="${NUMAVM_APPEND:-}"
NUMAVM_CACHE="${NUMAVM_CACHE:-$repo/.cache/numavm}"
NUMAVM_REFRESH_KERNEL="${NUMAVM_REFRESH_KERNEL:-0}"
NUMAVM_QUIET="${NUMAVM_QUIET:-0}"
NUMAVM_BINS="${NUMAVM_BINS:-}"
NUMAVM_FILES="${NUMAVM_FILES:-}"
NUMAVM_ENV="${NUMAVM_ENV:-}"
PKGS="${PKGS:-}"

usage() {
	cat <<'USAGE'
usage: bash test/numavm/run.sh [options]

  --nodes 2|4         NUMA nodes in the guest (default 2; 4 uses distances 10/21/31)
  --mem SIZE          guest memory, split evenly over the nodes (default 2G)
  --smp N             guest CPUs, split evenly over the nodes (default 4)
  --threads N         SMT threads per core (default 1); each node holds whole cores
  --kernel debian|ubuntu
                      debian: Debian's stock kernel (default); ubuntu: a pinned
                      Ubuntu 24.04 kernel (6.8), which has core scheduling
  --pkgs "P..."       Go packages whose tests run in the guest (default: test/numavm/packages)
  --run REGEX         passed to every test binary as -test.run
  --test-args "A..."  extra arguments for every test binary (space-separated)
  --test-timeout D    -test.timeout of every test binary (default 5m)
  --cgroup v2|v1      v2: cgroup2 at /sys/fs/cgroup (default);
                      v1: v1 controllers under /sys/fs/cgroup, cgroup2 at /sys/fs/cgroup/unified
  --numa-balancing on|off
                      automatic NUMA balancing in the guest (default off: placements stay exact)
  --tcg multi|single  QEMU's TCG threads: one per vCPU (default), or one for all,
                      which a kernel that patches its code while running needs
  --timeout SECONDS   hard limit for the whole boot (default 600)
  --append "K=V..."   extra kernel command line
  --refresh-kernel    fetch the kernel again even if one is cached (Debian: the newest)
  --quiet             show only test output and the result, not the whole console
  --bins "CMD..."     host commands copied into the guest's /usr/bin with the shared
                      libraries ldd names (bash, redis-server, ...)
  --files "PATH..."   files or directories of the repository copied into the guest
                      under /src (bench/isolation -> /src/bench/isolation)
  --env "K=V..."      more environment for every test binary (space-separated)
USAGE
}

while [ $# -gt 0 ]; do
	case "$1" in
	--nodes) NUMAVM_NODES="$2"; shift 2 ;;
	--mem) NUMAVM_MEM="$2"; shift 2 ;;
	--smp) NUMAVM_SMP="$2"; shift 2 ;;
	--threads) NUMAVM_THREADS="$2"; shift 2 ;;
	--kernel) NUMAVM_KERNEL="$2"; shift 2 ;;
	--tcg) NUMAVM_TCG="$2"; shift 2 ;;
	--pkgs) PKGS="$2"; shift 2 ;;
	--run) NUMAVM_RUN="$2"; shift 2 ;;
	--test-args) NUMAVM_TEST_ARGS="$2"; shift 2 ;;
	--test-timeout) NUMAVM_TEST_TIMEOUT="$2"; shift 2 ;;
	--cgroup) NUMAVM_CGROUP="$2"; shift 2 ;;
	--numa-balancing) NUMAVM_NUMA_BALANCING="$2"; shift 2 ;;
	--timeout) NUMAVM_TIMEOUT="$2"; shift 2 ;;
	--append) NUMAVM_APPEND="$2"; shift 2 ;;
	--refresh-kernel) NUMAVM_REFRESH_KERNEL=1; shift ;;
	--quiet) NUMAVM_QUIET=1; shift ;;
	--bins) NUMAVM_BINS="$2"; shift 2 ;;
	--files) NUMAVM_FILES="$2"; shift 2 ;;
	--env) NUMAVM_ENV="$2"; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "numavm: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
done

if [ -z "$PKGS" ]; then
	PKGS="$(grep -v '^[[:space:]]*\(#\|$\)' "$here/packages" | tr '\n' ' ')"
fi

# shellcheck source=test/numavm/lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=test/numavm/lib/deps.sh
. "$here/lib/deps.sh"
# shellcheck source=test/numavm/lib/kernel.sh
. "$here/lib/kernel.sh"
# shellcheck source=test/numavm/lib/layout.sh
. "$here/lib/layout.sh"
# shellcheck source=test/numavm/lib/initramfs.sh
. "$here/lib/initramfs.sh"
# shellcheck source=test/numavm/lib/libvirt.sh
. "$here/lib/libvirt.sh"
# shellcheck source=test/numavm/lib/boot.sh
. "$here/lib/boot.sh"

numavm_check_settings
mkdir -p "$NUMAVM_CACHE"
numavm_install_deps
numavm_libvirt_deps
kernel="$(numavm_kernel)"
numavm_layout
initrd="$(numavm_initramfs)"
numavm_boot "$kernel" "$initrd"
