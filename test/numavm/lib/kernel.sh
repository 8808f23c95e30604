# shellcheck shell=bash
# Fetches Debian's stock amd64 kernel image and keeps only vmlinuz.

# numavm_kernel prints the path of a cached vmlinuz, fetching one when the cache
# is empty or NUMAVM_REFRESH_KERNEL=1. Only the kernel image is extracted: the
# guest needs no modules, because everything it uses (serial console, devtmpfs,
# cgroups, NUMA, initramfs) is built into Debian's kernel.
numavm_kernel() {
	local dir="$NUMAVM_CACHE/kernel" cached
	mkdir -p "$dir"
	cached="$(find "$dir" -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n 1)"
	if [ -n "$cached" ] && [ "$NUMAVM_REFRESH_KERNEL" != 1 ]; then
		numavm_log "kernel: cached $(basename "$cached")"
		echo "$cached"
		return 0
	fi
	command -v apt-get >/dev/null || numavm_die "no kernel cached in $dir and no apt-get to fetch one"
	numavm_apt_update

	# apt-get download drops privileges to _apt, which must be able to write here.
	local work="$dir/download"
	rm -rf "$work"
	mkdir -p "$work"
	chmod 0777 "$work"

	# linux-image-amd64 is a dependency package; the kernel itself is the
	# versioned linux-image-<abi>-amd64 it depends on.
	numavm_log "kernel: apt-get download linux-image-amd64"
	(cd "$work" && apt-get download -qq linux-image-amd64 >&2)
	local meta real
	meta="$(find "$work" -name 'linux-image-amd64_*.deb' | sed -n 1p)"
	[ -n "$meta" ] || numavm_die "apt-get download linux-image-amd64 left no .deb in $work"
	real="$(dpkg-deb -f "$meta" Depends | tr ',' '\n' |
		sed -n 's/^ *\(linux-image-[0-9][^ ]*-amd64\)\( .*\)\?$/\1/p' | sed -n 1p)"
	[ -n "$real" ] || numavm_die "$meta: no linux-image-<version>-amd64 in Depends: $(dpkg-deb -f "$meta" Depends)"

	numavm_log "kernel: apt-get download $real"
	(cd "$work" && apt-get download -qq "$real" >&2)
	local deb
	deb="$(find "$work" -name "${real}_*.deb" | sed -n 1p)"
	[ -n "$deb" ] || numavm_die "apt-get download $real left no .deb in $work"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" --wildcards './boot/vmlinuz-*'
	local image
	image="$(find "$work/boot" -name 'vmlinuz-*' | sed -n 1p)"
	[ -n "$image" ] || numavm_die "$deb holds no ./boot/vmlinuz-*"
	mv "$image" "$dir/"
	rm -rf "$work"
	numavm_log "kernel: cached $(basename "$image") ($(du -h "$dir/$(basename "$image")" | cut -f1))"
	echo "$dir/$(basename "$image")"
}
