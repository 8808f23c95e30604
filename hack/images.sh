#!/usr/bin/env bash
# Builds the project's images without a container daemon (make images): locus (the
# agent, runs as root) and locus-scheduler (runs as 65532), each a static binary on
# an empty base, for every platform of $PLATFORMS, as one OCI archive per image
# holding all platforms (tools/oci). The archives name the images
# $IMAGE_REPO/NAME:$IMAGE_TAG; `make push REGISTRY=...` pushes them. Each
# build says when it starts and ends (hack/progress.sh).
#
#   hack/images.sh [OUT]   archives in OUT (default _output/images), binaries in OUT/bin/OS-ARCH
#
# VERSION (what the binaries say; default hack/version.sh: the chart's
# appVersion on a release commit, else <appVersion>-dev+<commit>), IMAGE_TAG
# (default: VERSION as a tag, <appVersion>-dev.<commit> between releases, so that
# no two commits' images share a tag; written to OUT/TAG), COMMIT
# (default: git HEAD), PLATFORMS (default "linux/amd64 linux/arm64"),
# IMAGE_REPO (default ghcr.io/locus-project).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/progress.sh
. "$repo/hack/progress.sh"
go=${GO:-go}
out=${1:-$repo/_output/images}
version=${VERSION:-$("$repo/hack/version.sh")}
tag=${IMAGE_TAG:-${version//+/.}}
commit=${COMMIT:-$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)}
platforms=${PLATFORMS:-linux/amd64 linux/arm64}
image_repo=${IMAGE_REPO:-ghcr.io/locus-project}
[ -n "$tag" ] || {
	echo "images: no IMAGE_TAG and no version" >&2
	exit 1
}
t0=$(date +%s.%N)

# The Go build the archives are made by, once per run (its own module).
tool=$repo/.cache/bin/oci
step "the oci tool (tools/oci)" env -C "$repo/tools/oci" CGO_ENABLED=0 "$go" build -o "$tool" .

# No -trimpath: the same compile actions as go test and make build, so that with a
# warm build cache an image costs a link, not a rebuild of Kubernetes.
pkg=github.com/locus-project/locus/cmd/internal/buildinfo
ldflags="-s -w -X $pkg.version=$version -X $pkg.commit=$commit"
for name in locus locus-scheduler; do
	bins=()
	for p in $platforms; do
		os=${p%/*} arch=${p#*/}
		dir=$out/bin/$os-$arch
		mkdir -p "$dir"
		step "$name for $p" env -C "$repo" CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" "$go" build -ldflags "$ldflags" -o "$dir/$name" "./cmd/$name"
		bins+=(-bin "$p=$dir/$name")
	done
	user=()
	# The scheduler needs no privilege; the agent writes other pods' cgroups as root.
	[ "$name" = locus ] || user=(-user 65532:65532)
	"$tool" build -name "$name" -version "$tag" -revision "$commit" -repo "$image_repo" \
		"${user[@]}" "${bins[@]}" -o "$out/$name.oci.tar"
done
# What helm install needs as image.tag for these archives (docs/quickstart.md).
echo "$tag" >"$out/TAG"
echo "images: tag $tag (binaries $version) for $platforms in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s" >&2
