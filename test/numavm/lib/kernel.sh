# shellcheck shell=bash
# Fetches the guest's kernel image and keeps only vmlinuz: Debian's stock amd64
# kernel (the default), or one pinned build of Ubuntu's generic kernel, which
# has core scheduling (CONFIG_SCHED_CORE=y) where Debian's has not.

# The Ubuntu kernel: one package of the noble release pocket, which never
# changes, checked against this digest before anything is kept.
numavm_ubuntu_url="http://archive.ubuntu.com/ubuntu/pool/main/l/linux/linux-image-unsigned-6.8.0-31-generic_6.8.0-31.31_amd64.deb"
numavm_ubuntu_sha256="35115ceb5ddc1e73034a73d6b064b9c6d38c534f20279fd7229c510515b931d8"

# numavm_kernel prints the path of the cached vmlinuz of NUMAVM_KERNEL.
numavm_kernel() {
	case "$NUMAVM_KERNEL" in
	debian) numavm_kernel_debian ;;
	ubuntu) numavm_kernel_ubuntu ;;
	*) numavm_die "NUMAVM_KERNEL=$NUMAVM_KERNEL: want debian or ubuntu" ;;
	esac
}

# numavm_kernel_debian prints the path of a cached Debian vmlinuz, fetching one
# when the cache is empty or NUMAVM_REFRESH_KERNEL=1. Only the kernel image is
# extracted: the guest needs no modules, because everything it uses (serial
# console, devtmpfs, cgroups, NUMA, initramfs) is built into Debian's kernel.
numavm_kernel_debian() {
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

# numavm_kernel_ubuntu prints the path of the cached Ubuntu vmlinuz, fetching
# the pinned package with curl when the cache lacks it or
# NUMAVM_REFRESH_KERNEL=1. A package whose SHA-256 is not the pinned one is an
# error and is not kept. Ubuntu's generic kernel, too, has everything the guest
# uses built in (8250 serial console, gzip initramfs, devtmpfs, cgroup v1 and
# v2, NUMA), so no module is needed.
numavm_kernel_ubuntu() {
	local dir="$NUMAVM_CACHE/kernel-ubuntu" name="vmlinuz-6.8.0-31-generic"
	mkdir -p "$dir"
	if [ -f "$dir/$name" ] && [ "$NUMAVM_REFRESH_KERNEL" != 1 ]; then
		numavm_log "kernel: cached ubuntu $name"
		echo "$dir/$name"
		return 0
	fi
	command -v curl >/dev/null || numavm_die "no Ubuntu kernel cached in $dir and no curl to fetch one"
	local work="$dir/download"
	rm -rf "$work"
	mkdir -p "$work"
	numavm_log "kernel: curl $numavm_ubuntu_url"
	curl -fsSL --retry 3 --max-time 600 -o "$work/kernel.deb" "$numavm_ubuntu_url" ||
		{ rm -rf "$work"; numavm_die "downloading $numavm_ubuntu_url failed"; }
	local sum
	sum="$(sha256sum "$work/kernel.deb" | cut -d' ' -f1)"
	if [ "$sum" != "$numavm_ubuntu_sha256" ]; then
		rm -rf "$work"
		numavm_die "$numavm_ubuntu_url has SHA-256 $sum, not the pinned $numavm_ubuntu_sha256; nothing was cached"
	fi
	dpkg-deb --fsys-tarfile "$work/kernel.deb" | tar -x -C "$work" "./boot/$name" ||
		{ rm -rf "$work"; numavm_die "$numavm_ubuntu_url holds no ./boot/$name"; }
	mv "$work/boot/$name" "$dir/$name"
	rm -rf "$work"
	numavm_log "kernel: cached ubuntu $name ($(du -h "$dir/$name" | cut -f1))"
	echo "$dir/$name"
}
