# shellcheck shell=bash
# libvirt and QEMU in the guest, for test/numavm/libvirt: the daemon, its QEMU
# driver module, virsh, QEMU with its TCG accelerator and firmware, each shared
# object with the libraries ldd names. Copied only when that package is among
# the guest's tests.

numavm_libvirt_lib=/usr/lib/x86_64-linux-gnu
numavm_libvirt_driver="$numavm_libvirt_lib/libvirt/connection-driver/libvirt_driver_qemu.so"
numavm_libvirt_tcg="$numavm_libvirt_lib/qemu/accel-tcg-x86_64.so"

# numavm_wants_libvirt: the libvirt guest test is among PKGS.
numavm_wants_libvirt() {
	[[ " $PKGS " == *" ./test/numavm/libvirt "* ]]
}

# numavm_libvirt_deps installs libvirt's daemon, QEMU driver and client when
# the libvirt test is to run (QEMU itself the guest's boot already needs).
numavm_libvirt_deps() {
	numavm_wants_libvirt || return 0
	local need=() pair tool pkg
	for pair in libvirtd:libvirt-daemon virsh:libvirt-clients; do
		tool="${pair%%:*}" pkg="${pair#*:}"
		command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || need+=("$pkg")
	done
	[ -f "$numavm_libvirt_driver" ] || need+=(libvirt-daemon-driver-qemu)
	[ "${#need[@]}" -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] || numavm_die "missing packages ${need[*]} and not root to install them"
	numavm_apt_update
	numavm_log "apt-get install ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
		--no-install-recommends "${need[@]}" >&2
}

# numavm_copy_libvirt copies what libvirtd needs to start a QEMU domain.
numavm_copy_libvirt() {
	local root="$1" so dir
	numavm_wants_libvirt || return 0
	numavm_log "copy: libvirtd, virsh, qemu-system-x86_64 and their firmware"
	PATH="$PATH:/usr/sbin" numavm_copy_command "$root" libvirtd
	numavm_copy_command "$root" virsh
	numavm_copy_command "$root" qemu-system-x86_64
	for so in "$numavm_libvirt_driver" "$numavm_libvirt_tcg"; do
		[ -f "$so" ] || numavm_die "$so not found on the host"
		mkdir -p "$root$(dirname "$so")"
		cp -L "$so" "$root$so"
		numavm_copy_libraries "$root" "$so"
	done
	# QEMU's firmware path is /usr/share/qemu then /usr/share/seabios; libvirt
	# reads its CPU models and schemas from /usr/share/libvirt.
	for dir in /usr/share/qemu /usr/share/seabios /usr/share/libvirt; do
		[ -d "$dir" ] || numavm_die "$dir not found on the host"
		mkdir -p "$root$(dirname "$dir")"
		cp -r "$dir" "$root$dir"
	done
}
