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

# QEMU's firmware for a `type='qemu'` domain on the pc machine with no disk,
# network or display: SeaBIOS (QEMU looks in /usr/share/qemu, then
# /usr/share/seabios) and the x86 option ROMs the pc machine may load. The
# rest of /usr/share/qemu is other architectures' firmware and keymaps.
numavm_libvirt_firmware=(
	/usr/share/seabios/bios-256k.bin
	/usr/share/qemu/kvmvapic.bin
	/usr/share/qemu/linuxboot.bin
	/usr/share/qemu/linuxboot_dma.bin
	/usr/share/qemu/multiboot.bin
	/usr/share/qemu/multiboot_dma.bin
	/usr/share/qemu/pvh.bin
)

# numavm_copy_libvirt copies what libvirtd needs to start a QEMU domain. The
# shared libraries of every program and module are listed by one ldd and
# copied once (about 80 of them, most shared by libvirtd and QEMU): a cp and
# a mkdir per library and program took a minute on a loaded host.
numavm_copy_libvirt() {
	local root="$1" so f
	numavm_wants_libvirt || return 0
	numavm_log "copy: libvirtd, virsh, qemu-system-x86_64 and SeaBIOS"
	local -a elves=(/usr/sbin/libvirtd "$(command -v virsh)" "$(command -v qemu-system-x86_64)"
		"$numavm_libvirt_driver" "$numavm_libvirt_tcg")
	for f in "${elves[@]}" "${numavm_libvirt_firmware[@]}"; do
		[ -f "$f" ] || numavm_die "$f not found on the host"
	done
	cp -L "${elves[@]:0:3}" "$root/usr/bin/"
	for so in "$numavm_libvirt_driver" "$numavm_libvirt_tcg"; do
		mkdir -p "$root$(dirname "$so")"
		cp -L "$so" "$root$so"
	done
	# ldd prints "name => /path (addr)" and the loader as "/path (addr)".
	ldd "${elves[@]}" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' |
		sort -u | xargs -r cp -L --parents -t "$root"
	cp -L --parents -t "$root" "${numavm_libvirt_firmware[@]}"
	# libvirt reads its CPU models from /usr/share/libvirt/cpu_map.
	mkdir -p "$root/usr/share/libvirt"
	cp -r /usr/share/libvirt/cpu_map /usr/share/libvirt/schemas "$root/usr/share/libvirt/"
}
