# shellcheck shell=bash
# Shared helpers for run.sh: logging, phase timing and settings checks.

numavm_t0=$SECONDS

# numavm_log prints a progress line on stderr, so stdout stays free for values
# that functions return.
numavm_log() {
	printf 'numavm[%3ds]: %s\n' "$((SECONDS - numavm_t0))" "$*" >&2
}

numavm_die() {
	printf 'numavm: error: %s\n' "$*" >&2
	exit 1
}

# numavm_mib converts a QEMU-style size (512M, 2G, 2048) to MiB.
numavm_mib() {
	case "$1" in
	*[Gg]) echo $((${1%[Gg]} * 1024)) ;;
	*[Mm]) echo "${1%[Mm]}" ;;
	*) echo "$1" ;;
	esac
}

numavm_check_settings() {
	local n
	for n in NUMAVM_NODES NUMAVM_SMP NUMAVM_THREADS NUMAVM_TIMEOUT; do
		[[ "${!n}" =~ ^[1-9][0-9]*$ ]] || numavm_die "$n=${!n}: want a positive integer"
	done
	[[ "$NUMAVM_MEM" =~ ^[1-9][0-9]*[MmGg]?$ ]] || numavm_die "NUMAVM_MEM=$NUMAVM_MEM: want a size such as 2G or 1536M"
	[ "$NUMAVM_NODES" -le 8 ] || numavm_die "NUMAVM_NODES=$NUMAVM_NODES: at most 8 nodes"
	[ $((NUMAVM_SMP % NUMAVM_NODES)) -eq 0 ] ||
		numavm_die "NUMAVM_SMP=$NUMAVM_SMP does not split evenly over NUMAVM_NODES=$NUMAVM_NODES"
	[ $((NUMAVM_SMP / NUMAVM_NODES % NUMAVM_THREADS)) -eq 0 ] ||
		numavm_die "NUMAVM_THREADS=$NUMAVM_THREADS: each node's $((NUMAVM_SMP / NUMAVM_NODES)) CPUs (NUMAVM_SMP=$NUMAVM_SMP over $NUMAVM_NODES nodes) are not whole cores of $NUMAVM_THREADS threads"
	case "$NUMAVM_TCG" in
	multi | single) ;;
	*) numavm_die "NUMAVM_TCG=$NUMAVM_TCG: want multi or single" ;;
	esac
	case "$NUMAVM_KERNEL" in
	debian | ubuntu) ;;
	*) numavm_die "NUMAVM_KERNEL=$NUMAVM_KERNEL: want debian or ubuntu" ;;
	esac
	local mib
	mib="$(numavm_mib "$NUMAVM_MEM")"
	[ $((mib % NUMAVM_NODES)) -eq 0 ] ||
		numavm_die "NUMAVM_MEM=$NUMAVM_MEM (${mib} MiB) does not split evenly over $NUMAVM_NODES nodes"
	[ $((mib / NUMAVM_NODES)) -ge 256 ] ||
		numavm_die "NUMAVM_MEM=$NUMAVM_MEM leaves less than 256 MiB per node"
	case "$NUMAVM_CGROUP" in
	v1 | v2) ;;
	*) numavm_die "NUMAVM_CGROUP=$NUMAVM_CGROUP: want v1 or v2" ;;
	esac
	case "$NUMAVM_NUMA_BALANCING" in
	on | off) ;;
	*) numavm_die "NUMAVM_NUMA_BALANCING=$NUMAVM_NUMA_BALANCING: want on or off" ;;
	esac
	[ -n "$PKGS" ] || numavm_die "no packages to test: PKGS is empty and test/numavm/packages lists none"
}
