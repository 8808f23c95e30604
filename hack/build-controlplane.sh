#!/usr/bin/env bash
# Builds the binaries of a real Kubernetes control plane for tests: kube-apiserver,
# kubectl and etcd from the Kubernetes release's own module graph (tools/controlplane),
# and kwok from its release's graph (tools/controlplane/kwok). Output goes to
# $LOCUS_CONTROLPLANE_BIN (default .cache/controlplane/bin). A stamp file records a
# hash of everything that decides the result; when it matches, nothing is rebuilt.
#
#   hack/build-controlplane.sh          build if needed
#   hack/build-controlplane.sh --force  rebuild
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/progress.sh
. "$repo/hack/progress.sh"
bin=${LOCUS_CONTROLPLANE_BIN:-$repo/.cache/controlplane/bin}
go=${GO:-go}

kube_version=v1.33.13
binaries=(kube-apiserver kubectl etcd kwok)

force=0
case "${1:-}" in
'') ;;
--force) force=1 ;;
*)
	echo "usage: $0 [--force]" >&2
	exit 2
	;;
esac

# The stamp covers the module files (versions and checksums), this script (flags) and
# the Go toolchain, so changing any of them rebuilds.
stamp=$(
	{
		"$go" version
		cat "$0" \
			"$repo/tools/controlplane/go.mod" "$repo/tools/controlplane/go.sum" \
			"$repo/tools/controlplane/kwok/go.mod" "$repo/tools/controlplane/kwok/go.sum"
	} | sha256sum | cut -d' ' -f1
)

up_to_date() {
	[ -f "$bin/STAMP" ] && [ "$(cat "$bin/STAMP")" = "$stamp" ] || return 1
	for b in "${binaries[@]}"; do
		[ -x "$bin/$b" ] || return 1
	done
}

if [ "$force" = 0 ] && up_to_date; then
	echo "control plane binaries up to date in $bin"
	exit 0
fi

major=${kube_version#v}
major=${major%%.*}
minor=${kube_version#v*.}
minor=${minor%%.*}
# kubectl and client-go refuse a server whose version they cannot parse, and the
# default stamp of an unreleased build ("v0.0.0-master") is one of those.
kube_ldflags="-s -w
 -X k8s.io/component-base/version.gitVersion=$kube_version
 -X k8s.io/component-base/version.gitMajor=$major
 -X k8s.io/component-base/version.gitMinor=$minor
 -X k8s.io/component-base/version.gitTreeState=clean"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/locus-controlplane.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)
echo "building kube-apiserver, kubectl, etcd ($kube_version graph) and kwok into $bin (cold: 15 to 30 minutes on two CPUs)"
export CGO_ENABLED=0
# One invocation so the Go tool builds the shared packages once, in parallel.
step "kube-apiserver, kubectl and etcd" env -C "$repo/tools/controlplane" "$go" build -trimpath -ldflags "$kube_ldflags" -o "$tmp/" \
	k8s.io/kubernetes/cmd/kube-apiserver \
	k8s.io/kubernetes/cmd/kubectl \
	go.etcd.io/etcd/server/v3
# A main package at a /v3 module root is named after the element before it.
mv "$tmp/server" "$tmp/etcd"
step kwok env -C "$repo/tools/controlplane/kwok" "$go" build -trimpath -ldflags "-s -w" -o "$tmp/kwok" sigs.k8s.io/kwok/cmd/kwok

mkdir -p "$bin"
rm -f "$bin/STAMP"
for b in "${binaries[@]}"; do
	mv -f "$tmp/$b" "$bin/$b"
done
echo "$stamp" >"$bin/STAMP"
echo "built in $(($(date +%s) - start)) s"
"$bin/kube-apiserver" --version
"$bin/etcd" --version | sed -n 1p
"$bin/kwok" --version 2>/dev/null | sed -n 1p || true
