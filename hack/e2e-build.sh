#!/usr/bin/env bash
# Builds what hack/e2e-up.sh runs besides the control plane: the kubelet and
# kube-controller-manager v1.33.13 from tools/kubelet (the release's own module
# graph, stamped as hack/build-controlplane.sh stamps its binaries), cached in
# .cache/e2e/bin with a STAMP like the control plane's; the locus and
# locus-scheduler images from this checkout (hack/images.sh, OCI archives, and
# their binaries in .cache/e2e/bin for the host mode); helm; and the pause and
# workload images (tools/images) as docker-archive tarballs in .cache/e2e/images,
# with a STAMP of the sources they were built from: built again only when those
# changed (make e2e runs this for each of its nodes).
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

# The project's own binaries and images, for this machine's platform only (the
# images are packaging, hack/images.sh). The host mode runs the same binaries the
# images hold. Built once for each state of the sources: make e2e builds for
# each of its nodes, and linking the agent and the scheduler takes a minute or
# more on two busy CPUs.
cd "$repo"
arch=$("$go" env GOARCH)
images=("$E2E_IMAGES/locus.oci.tar" "$E2E_IMAGES/locus-scheduler.oci.tar" "$E2E_IMAGES/TAG"
	"$E2E_IMAGES/pause.tar" "$E2E_IMAGES/workload.tar" "$E2E_BIN/locus" "$E2E_BIN/locus-scheduler")
# sources_stamp: what the images are built from: the commit, the version and tag
# they are stamped with, the uncommitted changes (tracked and new files), Go and
# this script. Nothing outside a git checkout: no stamp, always built.
sources_stamp() {
	local commit
	commit=$(git -C "$repo" rev-parse HEAD 2>/dev/null) || return 1
	{
		"$go" version
		echo "$commit ${VERSION:-$("$repo/hack/version.sh")} ${IMAGE_TAG:-} $arch $PAUSE_IMAGE $WORKLOAD_IMAGE"
		cat "$0"
		git -C "$repo" diff HEAD --binary
		git -C "$repo" ls-files -z --others --exclude-standard | (cd "$repo" && xargs -0 -r sha256sum --)
	} | sha256sum | cut -d' ' -f1
}
stamp=$(sources_stamp) || stamp=
up_to_date() {
	local f
	[ -n "$stamp" ] && [ "$(cat "$E2E_IMAGES/STAMP" 2>/dev/null)" = "$stamp" ] || return 1
	for f in "${images[@]}"; do
		[ -s "$f" ] || return 1
	done
}
if up_to_date; then
	log "the locus, pause and workload images up to date in $E2E_IMAGES"
else
	mkdir -p "$E2E_IMAGES"
	rm -f "$E2E_IMAGES/STAMP"
	step "the locus images (hack/images.sh)" env PLATFORMS="linux/$arch" hack/images.sh "$E2E_IMAGES"
	cp "$E2E_IMAGES/bin/linux-$arch/locus" "$E2E_IMAGES/bin/linux-$arch/locus-scheduler" "$E2E_BIN/"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	step "the pause and workload images" "$go" build -trimpath -ldflags "-s -w" -o "$tmp/" ./tools/images ./tools/images/pause ./tools/images/workload
	"$tmp/images" -ref "$PAUSE_IMAGE" -o "$E2E_IMAGES/pause.tar" -file "/pause=$tmp/pause"
	"$tmp/images" -ref "$WORKLOAD_IMAGE" -o "$E2E_IMAGES/workload.tar" -file "/workload=$tmp/workload"
	[ -z "$stamp" ] || echo "$stamp" >"$E2E_IMAGES/STAMP"
fi
step helm "$repo/hack/helm-check.sh" --install-only >/dev/null
log "built in $(since "$t0") s"
