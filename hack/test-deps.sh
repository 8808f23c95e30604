#!/usr/bin/env bash
# What `make test` needs on this machine besides Go and make, and what it does
# here: said before anything starts, then the missing Debian packages are
# installed with one apt-get (as root). The table below is the one list: the
# scripts that install for themselves (hack/e2e-up.sh, test/numavm/lib/deps.sh)
# install nothing it does not name, and every command a test looks up is in it
# (test/prereqs checks both).
#
#   hack/test-deps.sh           say what make test does, install what is missing
#   hack/test-deps.sh --check   say it, and fail if anything is missing
#   hack/test-deps.sh --list    the table: COMMAND PACKAGE, one a line
set -euo pipefail

# COMMAND PACKAGE: who needs it.
deps=(
	"git git" # the version make build and make images stamp
	"tmux tmux" # cmd/locus: locus top's tests drive it in a terminal
	"chromium chromium" # pkg/agent: the /ui page in a headless browser
	"setpriv util-linux" # cmd/locus: status as a user without privileges
	"qemu-system-x86_64 qemu-system-x86" # make numa-test, the e2e guest: the NUMA guests
	"cpio cpio" # make numa-test: the guests' initramfs
	"gzip gzip"
	"dpkg-deb dpkg" # make numa-test: unpacks the guests' kernels
	"numactl numactl" # make numa-test: the peer tools copied into the guests
	"migratepages numactl"
	"numastat numactl"
	"busybox busybox-static" # make numa-test: the guests' shell (a static one)
	"timeout coreutils"
	"sha256sum coreutils"
	"curl curl" # make numa-test (the Ubuntu kernel), make e2e (health checks)
	"containerd containerd" # make e2e: the node's runtime (Debian's 1.6)
	"/usr/lib/cni/bridge containernetworking-plugins" # make e2e: the pods' network (bridge, host-local, loopback)
	"ctr containerd"
	"containerd-shim-runc-v2 containerd"
	"runc runc"
	"openssl openssl" # make e2e: the node's certificates
	"nsenter util-linux" # make e2e: the node's network namespace
	"setsid util-linux"
	"flock util-linux"
	"findmnt util-linux"
	"ip iproute2"
	"sysctl procps"
	"numad numad" # cmd/locus: locus numad answered side by side with numad -w
	"ipcrm util-linux" # cmd/locus: removes the message queue numad leaves behind
	"libvirtd libvirt-daemon" # test/numavm/libvirt: real libvirt in make numa-test's first guest (docs/kvm.md)
	"/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so libvirt-daemon-driver-qemu"
	"virsh libvirt-clients"
)

# present CMD: whether this machine has what the row of CMD stands for.
present() {
	case "$1" in
	busybox)
		# test/numavm needs a static busybox; a dynamic one does not count.
		local b
		for b in /bin/busybox /usr/bin/busybox; do
			[ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1 && return 0
		done
		return 1
		;;
	/*) [ -x "$1" ] ;; # a file, not a command on PATH
	*) command -v "$1" >/dev/null 2>&1 ;;
	esac
}

mode=${1:-install}
case "$mode" in
--list)
	printf '%s\n' "${deps[@]}"
	exit 0
	;;
install | --check) ;;
*)
	sed -n '9,11p' "$0" >&2
	exit 2
	;;
esac

command -v go >/dev/null 2>&1 || {
	echo "make test: no go on PATH: install Go 1.26 (https://go.dev/dl/) first" >&2
	exit 1
}

missing=() have=()
for row in "${deps[@]}"; do
	read -r cmd pkg <<<"$row"
	if present "$cmd"; then
		have+=("$pkg")
	else
		missing+=("$pkg")
	fi
done
uniq_words() { printf '%s\n' "$@" | sort -u | grep -v '^$' | paste -sd' ' || true; }
missing_list=$(uniq_words "${missing[@]+"${missing[@]}"}")
have_list=$(uniq_words "${have[@]+"${have[@]}"}")

cat >&2 <<EOF
make test runs every test level (CONTRIBUTING.md) and, on this machine:
  1. installs with apt-get the Debian packages it needs that are missing:
       ${missing_list:-none}
     (present: ${have_list:-none})
  2. builds into .cache/ from Go modules: kube-apiserver, etcd, kubectl, kwok, helm,
     staticcheck, the kubelet, kube-controller-manager and containerd 2 (cold: 30 to 60
     minutes on two CPUs; each build says when it starts and ends);
  3. runs the unit tests; as root, those on real cgroups write only in sub-trees they
     create and remove;
  4. boots QEMU guests with two NUMA nodes (make numa-test, hack/e2e-guest.sh), fetching
     Debian's and a pinned Ubuntu kernel into .cache/numavm;
  5. starts a one-node Kubernetes cluster on this machine (make e2e): containerd, the
     kubelet, etcd and kube-apiserver in the network namespace locus-e2e, using
     /var/lib/kubelet, /var/lib/containerd, /etc/kubernetes and kubepods cgroups;
     hack/e2e-down.sh takes it down and restores mounts, cgroups and sysctls.
EOF

[ -n "$missing_list" ] || exit 0
if [ "$mode" = --check ]; then
	echo "make test: missing Debian packages: $missing_list" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
	echo "make test: missing Debian packages $missing_list: install them (apt-get install $missing_list), or run make test as root on Debian" >&2
	exit 1
fi
echo "make test: apt-get install $missing_list" >&2
apt-get -o DPkg::Lock::Timeout=300 update -qq
# shellcheck disable=SC2086 # one word a package
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq $missing_list >/dev/null
