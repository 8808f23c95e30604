# shellcheck shell=bash
# Installs the host tools the test bed needs, with apt, only when missing.

# numavm_apt_updated makes sure `apt-get update` runs at most once per run.
numavm_apt_updated=0
numavm_apt_update() {
	if [ "$numavm_apt_updated" = 0 ]; then
		numavm_log "apt-get update"
		apt-get -o DPkg::Lock::Timeout=300 update -qq >&2
		numavm_apt_updated=1
	fi
}

# numavm_install_deps installs the package behind every missing tool:
# QEMU to boot, cpio and gzip to pack the initramfs, numactl for the peer tools
# copied into the guest, busybox-static for the guest's sh, sleep and friends,
# and curl when the Ubuntu kernel is to be fetched.
numavm_install_deps() {
	command -v go >/dev/null || numavm_die "go is not on PATH; the test binaries are built on the host"
	local need=() pair tool pkg
	for pair in qemu-system-x86_64:qemu-system-x86 cpio:cpio gzip:gzip \
		numactl:numactl migratepages:numactl numastat:numactl \
		dpkg-deb:dpkg timeout:coreutils sha256sum:coreutils curl:curl; do
		tool="${pair%%:*}" pkg="${pair#*:}"
		# curl fetches only the Ubuntu kernel.
		[ "$tool" != curl ] || [ "$NUMAVM_KERNEL" = ubuntu ] || continue
		command -v "$tool" >/dev/null 2>&1 || need+=("$pkg")
	done
	# busybox (dynamic) may be installed already; the guest needs the static one.
	numavm_busybox_static >/dev/null || need+=(busybox-static)
	[ "${#need[@]}" -eq 0 ] && return 0
	mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
	[ "$(id -u)" = 0 ] || numavm_die "missing packages ${need[*]} and not root to install them"
	numavm_apt_update
	numavm_log "apt-get install ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
		--no-install-recommends "${need[@]}" >&2
}

# numavm_busybox_static prints the path of a statically linked busybox, if any.
numavm_busybox_static() {
	local b
	for b in /bin/busybox /usr/bin/busybox; do
		if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then
			echo "$b"
			return 0
		fi
	done
	return 1
}
