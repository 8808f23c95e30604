# shellcheck shell=bash
# Derives the guest's NUMA layout: QEMU arguments, and the same facts in the
# form the guest's tests read back (LOCUS_NUMAVM_NODE_CPUS, LOCUS_NUMAVM_DISTANCES).

# numavm_distance is the SLIT distance between nodes a and b. Nodes pair up
# into sockets (0-1, 2-3, ...): 10 to itself, 21 within a socket, 31 across.
# Two nodes are one socket split in two (10/21); four are two such sockets, the
# shape of a two-socket server with sub-NUMA clustering.
numavm_distance() {
	local a="$1" b="$2"
	if [ "$a" = "$b" ]; then
		echo 10
	elif [ $((a / 2)) = $((b / 2)) ]; then
		echo 21
	else
		echo 31
	fi
}

# numavm_smp sets NUMAVM_QEMU_SMP (QEMU's -smp value) and NUMAVM_QEMU_CPU.
# With one thread a core -smp is the CPU count alone and the CPU model QEMU's
# default, as they always were. With NUMAVM_THREADS > 1 -smp names the
# topology: QEMU numbers CPUs thread-first (a core's threads are
# consecutive), so the consecutive, whole-core ranges numavm_layout gives each
# node keep every core's siblings in one node. Nodes pair into sockets as
# their distances say (an odd count is one socket).
numavm_smp() {
	NUMAVM_QEMU_SMP="$NUMAVM_SMP"
	NUMAVM_QEMU_CPU=()
	[ "$NUMAVM_THREADS" -gt 1 ] || return 0
	# qemu64 says AMD, and QEMU shows no threads of an AMD CPU without
	# topoext, which TCG lacks; as Intel it reports them in CPUID leaf 0xB.
	# shellcheck disable=SC2034 # boot.sh passes it to QEMU
	NUMAVM_QEMU_CPU=(-cpu "qemu64,vendor=GenuineIntel")
	local sockets=1
	[ $((NUMAVM_NODES % 2)) -ne 0 ] || sockets=$((NUMAVM_NODES / 2))
	local cores=$((NUMAVM_SMP / NUMAVM_THREADS / sockets))
	NUMAVM_QEMU_SMP="$NUMAVM_SMP,sockets=$sockets,cores=$cores,threads=$NUMAVM_THREADS"
}

# numavm_layout sets NUMAVM_QEMU_NUMA and NUMAVM_QEMU_SMP (QEMU arguments),
# NUMAVM_NODE_CPUS ("0-1;2-3") and NUMAVM_DISTANCES ("10,21;21,10"), rows in
# node order.
numavm_layout() {
	local nodes="$NUMAVM_NODES" per_cpu=$((NUMAVM_SMP / NUMAVM_NODES))
	local per_mib=$(($(numavm_mib "$NUMAVM_MEM") / NUMAVM_NODES))
	local n m first last row cpus=() rows=()
	numavm_smp
	NUMAVM_QEMU_NUMA=()
	for ((n = 0; n < nodes; n++)); do
		first=$((n * per_cpu)) last=$((n * per_cpu + per_cpu - 1))
		NUMAVM_QEMU_NUMA+=(-object "memory-backend-ram,id=m$n,size=${per_mib}M"
			-numa "node,nodeid=$n,cpus=$first-$last,memdev=m$n")
		if [ "$first" = "$last" ]; then cpus+=("$first"); else cpus+=("$first-$last"); fi
	done
	# QEMU wants every node declared before any distance names it.
	for ((n = 0; n < nodes; n++)); do
		row=""
		for ((m = 0; m < nodes; m++)); do
			row+="${row:+,}$(numavm_distance "$n" "$m")"
			if [ "$m" -gt "$n" ]; then
				NUMAVM_QEMU_NUMA+=(-numa "dist,src=$n,dst=$m,val=$(numavm_distance "$n" "$m")")
			fi
		done
		rows+=("$row")
	done
	NUMAVM_NODE_CPUS="$(IFS=';'; echo "${cpus[*]}")"
	NUMAVM_DISTANCES="$(IFS=';'; echo "${rows[*]}")"
	numavm_log "layout: $nodes nodes, cpus $NUMAVM_NODE_CPUS, distances $NUMAVM_DISTANCES, ${per_mib} MiB per node, -smp $NUMAVM_QEMU_SMP"
}
