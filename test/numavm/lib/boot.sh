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
	local -a qemu=(qemu-system-x86_64 -accel tcg -m "$NUMAVM_MEM" -smp "$NUMAVM_SMP"
		"${NUMAVM_QEMU_NUMA[@]}" -nographic -no-reboot -nodefaults -serial stdio
		-kernel "$kernel" -initrd "$initrd" -append "$append")
	numavm_log "boot: ${qemu[*]}"
	local start=$SECONDS status=0
	# QEMU reads stdin for the serial console; CI has none, and a terminal's
	# keystrokes must not reach the guest.
	if [ "$NUMAVM_QUIET" = 1 ]; then
		timeout --kill-after=10 "$NUMAVM_TIMEOUT" "${qemu[@]}" </dev/null >"$log" 2>&1 || status=$?
	else
		timeout --kill-after=10 "$NUMAVM_TIMEOUT" "${qemu[@]}" </dev/null 2>&1 | tee "$log" || status=$?
	fi
	local took=$((SECONDS - start))
	numavm_verdict "$log" "$status" "$took"
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
