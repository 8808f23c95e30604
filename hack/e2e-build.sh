#!/usr/bin/env bash
# Builds what hack/e2e-up.sh runs besides the control plane: the kubelet and
# kube-controller-manager v1.33.13 from tools/kubelet (the release's own module
# graph, stamped as hack/build-controlplane.sh stamps its binaries), cached in
# .cache/e2e/bin with a STAMP like the control plane's; the locus and
# locus-scheduler images from this checkout (hack/images.sh, OCI archives, and
# their binaries in .cache/e2e/bin for the host mode); helm; and the pause and
# workload images (tools/images) as docker-archive tarballs in .cache/e2e/images.
set -euo pipefail
# shellcheck source=hack/e2e-lib.sh
. "$(dirname "$0")/e2e-lib.sh"
# shellcheck source=hack/progress.sh
. "$repo/hack/progress.sh"
go=${GO:-go}
kube_version=v1.33.13
export CGO_ENABLED=0
t0=$(now)

"$repo/hack/build-controlplane.sh"

stamp=$({
	"$go" version
	cat "$0" "$repo/tools/kubelet/go.mod" "$repo/tools/kubelet/go.sum"
} | sha256sum | cut -d' ' -f1)
if [ "$(cat "$E2E_BIN/STAMP" 2>/dev/null)" = "$stamp" ] && [ -x "$E2E_BIN/kubelet" ] && [ -x "$E2E_BIN/kube-controller-manager" ]; then
	log "kubelet and kube-controller-manager up to date in $E2E_BIN"
else
	log "building kubelet and kube-controller-manager $kube_version into $E2E_BIN"
	minor=${kube_version#v1.}
	minor=${minor%%.*}
	mkdir -p "$E2E_BIN"
	rm -f "$E2E_BIN/STAMP"
	step "kubelet and kube-controller-manager" env -C "$repo/tools/kubelet" "$go" build -trimpath -o "$E2E_BIN/" -ldflags "-s -w
		-X k8s.io/component-base/version.gitVersion=$kube_version
		-X k8s.io/component-base/version.gitMajor=1
		-X k8s.io/component-base/version.gitMinor=$minor
		-X k8s.io/component-base/version.gitTreeState=clean" \
		k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-controller-manager
	echo "$stamp" >"$E2E_BIN/STAMP"
	"$E2E_BIN/kubelet" --version
fi

# containerd 2.x for the NRI variant (LOCUS_E2E_RUNTIME=containerd2), from
# tools/containerd2, cached like the kubelet.
build_containerd2() {
	local stamp
	stamp=$({
		"$go" version
		cat "$0" "$repo/tools/containerd2/go.mod" "$repo/tools/containerd2/go.sum"
	} | sha256sum | cut -d' ' -f1)
	if [ "$(cat "$CTRD2_BIN/STAMP" 2>/dev/null)" = "$stamp" ] && [ -x "$CTRD2_BIN/containerd" ] &&
		[ -x "$CTRD2_BIN/containerd-shim-runc-v2" ] && [ -x "$CTRD2_BIN/ctr" ]; then
		log "containerd 2 up to date in $CTRD2_BIN"
		return
	fi
	log "building containerd 2 into $CTRD2_BIN"
	mkdir -p "$CTRD2_BIN"
	rm -f "$CTRD2_BIN/STAMP"
	step "containerd 2" env -C "$repo/tools/containerd2" "$go" build -trimpath -o "$CTRD2_BIN/" -ldflags "-s -w" \
		github.com/containerd/containerd/v2/cmd/containerd \
		github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
		github.com/containerd/containerd/v2/cmd/ctr
	echo "$stamp" >"$CTRD2_BIN/STAMP"
}
if [ "$E2E_RUNTIME" = containerd2 ]; then
	build_containerd2
fi

# The project's own binaries and images, for this machine's platform only: quick
# with a warm build cache (the images are packaging, hack/images.sh). The host
# mode runs the same binaries the images hold.
cd "$repo"
arch=$("$go" env GOARCH)
step "the locus images (hack/images.sh)" env PLATFORMS="linux/$arch" hack/images.sh "$E2E_IMAGES"
cp "$E2E_IMAGES/bin/linux-$arch/locus" "$E2E_IMAGES/bin/linux-$arch/locus-scheduler" "$E2E_BIN/"
step helm "$repo/hack/helm-check.sh" --install-only >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
step "the pause and workload images" "$go" build -trimpath -ldflags "-s -w" -o "$tmp/" ./tools/images ./tools/images/pause ./tools/images/workload
mkdir -p "$E2E_IMAGES"
"$tmp/images" -ref "$PAUSE_IMAGE" -o "$E2E_IMAGES/pause.tar" -file "/pause=$tmp/pause"
"$tmp/images" -ref "$WORKLOAD_IMAGE" -o "$E2E_IMAGES/workload.tar" -file "/workload=$tmp/workload"
log "built in $(since "$t0") s"
