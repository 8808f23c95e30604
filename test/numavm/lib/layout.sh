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

# numavm_layout sets NUMAVM_QEMU_NUMA (QEMU arguments), NUMAVM_NODE_CPUS
# ("0-1;2-3") and NUMAVM_DISTANCES ("10,21;21,10"), rows in node order.
numavm_layout() {
	local nodes="$NUMAVM_NODES" per_cpu=$((NUMAVM_SMP / NUMAVM_NODES))
	local per_mib=$(($(numavm_mib "$NUMAVM_MEM") / NUMAVM_NODES))
	local n m first last row cpus=() rows=()
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
	numavm_log "layout: $nodes nodes, cpus $NUMAVM_NODE_CPUS, distances $NUMAVM_DISTANCES, ${per_mib} MiB per node"
}
