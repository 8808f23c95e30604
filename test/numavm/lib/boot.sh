# shellcheck shell=bash
# Boots the guest and turns its console into an exit status.

# numavm_boot runs QEMU under a hard timeout, keeps the console in
# $NUMAVM_CACHE/console.log and exits with the tests' status: 0 only when the
# guest printed a NUMAVM-RESULT line with fail=0 and pass>0.
numavm_boot() {
	local kernel="$1" initrd="$2" log="$NUMAVM_CACHE/console.log"
	# Automatic NUMA balancing maps idle pages PROT_NONE, which move_pages(2)
	# then reports as -EFAULT/-ENOENT; off by default so placements are exact.
	local balancing=disable
	[ "$NUMAVM_NUMA_BALANCING" = off ] || balancing=enable
	local append="console=ttyS0 panic=-1 quiet numa_balancing=$balancing $NUMAVM_APPEND"
	# One TCG thread per vCPU is QEMU's default; thread=single runs them all
	# on one (see README: Kernels).
	local accel=tcg
	[ "$NUMAVM_TCG" = multi ] || accel=tcg,thread=single
	local -a qemu=(qemu-system-x86_64 -accel "$accel" "${NUMAVM_QEMU_CPU[@]}" -m "$NUMAVM_MEM" -smp "$NUMAVM_QEMU_SMP"
		"${NUMAVM_QEMU_NUMA[@]}" -nographic -no-reboot -nodefaults -serial stdio
		-kernel "$kernel" -initrd "$initrd" -append "$append")
	numavm_log "boot: ${qemu[*]}"
	local start=$SECONDS status=0
	# QEMU reads stdin for the serial console; CI has none, and a terminal's
	# keystrokes must not reach the guest. timeout runs QEMU in a process group
	# of its own, which a Ctrl-C or a signal to this script's group does not
	# reach: this script stops it when it exits, whatever the reason, or the
	# guest would run on until the timeout.
	timeout --kill-after=10 "$NUMAVM_TIMEOUT" "${qemu[@]}" </dev/null >"$log" 2>&1 &
	numavm_qemu_pid=$!
	trap numavm_stop_qemu EXIT
	trap 'numavm_stop_qemu; exit 130' INT
	trap 'numavm_stop_qemu; exit 143' TERM
	trap 'numavm_stop_qemu; exit 129' HUP
	# The console is shown by a tail in the background: the shell runs a trap
	# only once its foreground command ends, and wait ends at once on a signal.
	local tail_pid=
	if [ "$NUMAVM_QUIET" != 1 ]; then
		tail -n +1 -f --pid="$numavm_qemu_pid" "$log" &
		tail_pid=$!
	fi
	wait "$numavm_qemu_pid" || status=$?
	numavm_qemu_pid=
	[ -z "$tail_pid" ] || wait "$tail_pid" || true
	local took=$((SECONDS - start))
	numavm_verdict "$log" "$status" "$took"
}

# numavm_stop_qemu ends the guest if it still runs: SIGTERM to timeout, which
# passes it on to QEMU and sends SIGKILL 10 s later if QEMU is still there.
numavm_qemu_pid=
numavm_stop_qemu() {
	[ -n "$numavm_qemu_pid" ] || return 0
	if kill -TERM "$numavm_qemu_pid" 2>/dev/null; then
		numavm_log "stopping the guest (timeout pid $numavm_qemu_pid)"
	fi
	wait "$numavm_qemu_pid" 2>/dev/null || true
	numavm_qemu_pid=
}

# numavm_console prints the console log without carriage returns and the
# terminal resets the firmware and kernel send, so lines can be matched.
numavm_console() {
	tr -d '\r' <"$1" | sed 's/\x1bc//g; s/\x1b\[[0-9;?]*[a-zA-Z]//g'
}

# numavm_verdict reads the last result line of the console log and exits with
# the tests' status, showing the console's tail when there is no verdict.
numavm_verdict() {
	local log="$1" status="$2" took="$3" result pass fail skip
	result="$(numavm_console "$log" | grep -a '^NUMAVM-RESULT:' | tail -n 1 || true)"
	if [ -z "$result" ]; then
		if [ "$status" = 124 ] || [ "$status" = 137 ]; then
			echo "numavm: guest timed out after ${NUMAVM_TIMEOUT}s without a result line" >&2
		else
			echo "numavm: guest stopped (qemu status $status) after ${took}s without a result line" >&2
		fi
		echo "numavm: last console lines ($log):" >&2
		numavm_console "$log" | tail -n 40 >&2
		exit 1
	fi
	pass="$(sed -n 's/.* pass=\([0-9]*\).*/\1/p' <<<"$result")"
	fail="$(sed -n 's/.* fail=\([0-9]*\).*/\1/p' <<<"$result")"
	skip="$(sed -n 's/.* skip=\([0-9]*\).*/\1/p' <<<"$result")"
	if [ "$NUMAVM_QUIET" = 1 ]; then
		numavm_console "$log" | grep -a -E '^(--- |NUMAVM-|FAIL|panic:|\s+\S+_test\.go:)' || true
	fi
	numavm_log "guest ran ${took}s (boot to power-off, qemu status $status)"
	# The plain closing line CI runners recognise.
	echo "numavm: ${pass:-0} passed, ${fail:-0} failed, ${skip:-0} skipped"
	if [ "${fail:-1}" != 0 ]; then
		exit 1
	fi
	if [ "${pass:-0}" = 0 ]; then
		echo "numavm: no test passed in the guest; check PKGS and --run" >&2
		exit 1
	fi
}
