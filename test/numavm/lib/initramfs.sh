# shellcheck shell=bash
# Builds the guest's initramfs: the Go init, the locus binary, one static test
# binary per package with its package files (testdata), the numactl peer tools
# and any --bins with their shared libraries, libvirt and QEMU for the libvirt
# test (lib/libvirt.sh), the --files under /src, and busybox for the commands
# tests exec.

# numavm_initramfs prints the path of a fresh gzip'd newc cpio archive.
numavm_initramfs() {
	local root="$NUMAVM_CACHE/root" out="$NUMAVM_CACHE/initramfs.cpio.gz"
	rm -rf "$root"
	mkdir -p "$root"/{bin,usr/bin,tests,pkgs,numavm,dev,proc,sys,tmp,etc,root,run,var}
	# What a Debian root has and programs expect (ip netns keeps its names in
	# /var/run/netns, the kubelet gives host-network pods /etc/hosts and looks
	# its user up in /etc/passwd).
	ln -s ../run "$root/var/run"
	printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"
	: >"$root/etc/resolv.conf"
	echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"

	numavm_log "build: init and locus"
	# No -trimpath, here and for the test binaries: the same compile actions as
	# make unit's go test (CGO_ENABLED=0 both), so the guest's binaries cost a
	# link each, where -trimpath compiled every package again, the standard
	# library and Kubernetes' included.
	CGO_ENABLED=0 go build -o "$root/init" ./test/numavm/init || numavm_die "building the guest init failed"
	# Without its symbol table and DWARF (stack traces keep their names):
	# a third smaller, which the guest unpacks under TCG at every boot.
	CGO_ENABLED=0 go build -ldflags="-s -w" -o "$root/usr/bin/locus" ./cmd/locus || numavm_die "building cmd/locus failed"
	numavm_test_binaries "$root"
	numavm_copy_peers "$root"
	numavm_copy_libvirt "$root"
	numavm_copy_files "$root"
	numavm_copy_busybox "$root"
	numavm_write_config "$root"
	# The kernel opens /dev/console for init before devtmpfs exists; without
	# this node (root only) init reopens the console itself.
	[ "$(id -u)" != 0 ] || mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true

	(cd "$root" && find . -print0 | LC_ALL=C sort -z |
		cpio --null --create --format=newc --owner=0:0 --quiet) | gzip -1 >"$out"
	numavm_log "initramfs: $(du -h "$out" | cut -f1) ($(du -sh "$root" | cut -f1) unpacked)"
	echo "$out"
}

# numavm_test_binaries compiles `go test -c` for every package in PKGS into
# /tests and lists them in /numavm/tests as "import-path<TAB>binary<TAB>dir".
# Each binary runs in a copy of its package's own files (not .go sources), as
# `go test` runs it in the package directory.
numavm_test_binaries() {
	local root="$1" ip dir ntests bin
	local -a pkgs
	# shellcheck disable=SC2153 # PKGS is run.sh's setting
	read -r -a pkgs <<<"$PKGS"
	local listing
	listing="$(go list -f '{{.ImportPath}} {{.Dir}} {{if or .TestGoFiles .XTestGoFiles}}1{{else}}0{{end}}' "${pkgs[@]}")" ||
		numavm_die "go list ${pkgs[*]} failed (see above)"
	: >"$root/numavm/tests"
	while IFS=' ' read -r ip dir ntests; do
		if [ "$ntests" = 0 ]; then
			numavm_log "build: $ip has no test files, skipped"
			continue
		fi
		bin="/tests/$(echo "$ip" | tr '/.' '__').test"
		numavm_log "build: go test -c $ip"
		CGO_ENABLED=0 go test -c -o "$root$bin" "$ip" || numavm_die "go test -c $ip failed (see above)"
		mkdir -p "$root/pkgs/$ip"
		find "$dir" -maxdepth 1 -type f ! -name '*.go' -exec cp {} "$root/pkgs/$ip/" \;
		[ ! -d "$dir/testdata" ] || cp -r "$dir/testdata" "$root/pkgs/$ip/"
		printf '%s\t%s\t%s\n' "$ip" "$bin" "/pkgs/$ip" >>"$root/numavm/tests"
	done <<<"$listing"
	[ -s "$root/numavm/tests" ] || numavm_die "none of PKGS ($PKGS) has tests"
}

# numavm_copy_peers copies numactl, migratepages and numastat, and the
# commands NUMAVM_BINS names, with every shared library ldd names and the
# dynamic loader, at the paths they were linked for.
numavm_copy_peers() {
	local root="$1" tool
	local -a extra
	read -r -a extra <<<"$NUMAVM_BINS"
	for tool in numactl migratepages numastat "${extra[@]}"; do
		numavm_copy_command "$root" "$tool"
	done
}

# numavm_copy_command copies one host command into /usr/bin with its libraries.
numavm_copy_command() {
	local root="$1" tool="$2" path lib
	path="$(command -v "$tool")" || numavm_die "$tool not found on the host"
	cp -L "$path" "$root/usr/bin/$(basename "$tool")"
	numavm_copy_libraries "$root" "$path"
}

# numavm_copy_libraries copies the shared libraries ldd names for the ELF file
# path, and the dynamic loader, at the paths they were linked for.
numavm_copy_libraries() {
	local root="$1" path="$2" lib
	for lib in $(ldd "$path" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# numavm_copy_files copies the repository paths NUMAVM_FILES names into /src,
# keeping their relative paths (scripts a guest test runs).
numavm_copy_files() {
	local root="$1" f
	local -a files
	read -r -a files <<<"$NUMAVM_FILES"
	for f in "${files[@]}"; do
		case "$f" in
		/* | *..*) numavm_die "--files $f: want a path inside the repository" ;;
		esac
		[ -e "$f" ] || numavm_die "--files $f: no such file or directory in $(pwd)"
		mkdir -p "$root/src/$(dirname "$f")"
		cp -r "$f" "$root/src/$f"
	done
}

# numavm_copy_busybox installs a static busybox with one link per applet, so
# tests that exec sh, sleep or true find them on PATH.
numavm_copy_busybox() {
	local root="$1" bb applet
	bb="$(numavm_busybox_static)" || numavm_die "no static busybox on the host (package busybox-static)"
	cp "$bb" "$root/bin/busybox"
	for applet in $("$bb" --list); do
		[ -e "$root/bin/$applet" ] || [ -e "$root/usr/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
	done
}

# numavm_write_config writes /numavm/env (exported to every test and read by
# init) and /numavm/args (one test-binary argument per line).
numavm_write_config() {
	local root="$1" a
	local -a extra
	cat >"$root/numavm/env" <<ENV
LOCUS_NUMAVM_NODES=$NUMAVM_NODES
LOCUS_NUMAVM_NODE_CPUS=$NUMAVM_NODE_CPUS
LOCUS_NUMAVM_DISTANCES=$NUMAVM_DISTANCES
LOCUS_NUMAVM_CGROUP=$NUMAVM_CGROUP
LOCUS_NUMAVM_NUMA_BALANCING=$NUMAVM_NUMA_BALANCING
LOCUS_NUMAVM_THREADS=$NUMAVM_THREADS
LOCUS_NUMAVM_KERNEL=$NUMAVM_KERNEL
ENV
	read -r -a extra <<<"$NUMAVM_ENV"
	for a in "${extra[@]}"; do
		[[ $a == [A-Za-z_]*=* ]] || numavm_die "--env $a: want KEY=VALUE"
		echo "$a"
	done >>"$root/numavm/env"
	{
		echo "-test.timeout=$NUMAVM_TEST_TIMEOUT"
		[ -z "$NUMAVM_RUN" ] || echo "-test.run=$NUMAVM_RUN"
		read -r -a extra <<<"$NUMAVM_TEST_ARGS"
		for a in "${extra[@]}"; do echo "$a"; done
	} >"$root/numavm/args"
}
