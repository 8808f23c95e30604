#!/usr/bin/env bash
# Builds koord-scheduler (Koordinator's scheduler, with its NodeNUMAResource
# plugin) from a pinned commit of Koordinator's own source, for the side-by-side
# scheduler benchmark (bench/scheduler/run.sh --koord). Output goes to
# $LOCUS_KOORD_DIR (default .cache/koord): bin/koord-scheduler, crd/ with the
# CustomResourceDefinitions its informers wait for, and scheduler-config.yaml,
# the ConfigMap with the scheduler configuration Koordinator deploys
# (config/manager). A stamp records the commit and the Go toolchain; when it
# matches and the files are there, nothing is rebuilt.
#
#   bench/scheduler/koord.sh          build if needed
#   bench/scheduler/koord.sh --force  rebuild
#
# The source comes from $LOCUS_KOORD_MIRROR (a git directory holding the commit)
# when set and present, otherwise from a clone of GitHub's repository.
# Koordinator's go.mod asks for a newer toolchain than some machines have, and a
# few of its indirect modules are not needed by this binary, so it is built with
# GOFLAGS=-mod=mod.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${LOCUS_KOORD_DIR:-$repo/.cache/koord}
go=${GO:-go}
koord_repo=https://github.com/koordinator-sh/koordinator
koord_commit=a7a1b76bbf81abd26f9c377de1f31a60dd965f6e

force=0
case "${1:-}" in
'') ;;
--force) force=1 ;;
*)
	echo "usage: $0 [--force]" >&2
	exit 2
	;;
esac

stamp=$({
	echo "$koord_commit"
	"$go" version
} | sha256sum | cut -d' ' -f1)

if [ "$force" = 0 ] && [ -f "$out/STAMP" ] && [ "$(cat "$out/STAMP")" = "$stamp" ] &&
	[ -x "$out/bin/koord-scheduler" ] && [ -f "$out/scheduler-config.yaml" ]; then
	echo "koord-scheduler up to date in $out"
	exit 0
fi

src=$(mktemp -d "${TMPDIR:-/tmp}/koord-src.XXXXXX")
trap 'rm -rf "$src"' EXIT
if [ -n "${LOCUS_KOORD_MIRROR:-}" ] && git -C "$LOCUS_KOORD_MIRROR" cat-file -e "$koord_commit^{commit}" 2>/dev/null; then
	echo "koord-scheduler: source $koord_commit from $LOCUS_KOORD_MIRROR"
	git -C "$LOCUS_KOORD_MIRROR" archive "$koord_commit" | tar -x -C "$src"
else
	echo "koord-scheduler: cloning $koord_repo at $koord_commit"
	git clone --quiet --filter=blob:none --no-checkout "$koord_repo" "$src"
	git -C "$src" checkout --quiet "$koord_commit"
fi

echo "koord-scheduler: building (several minutes on a cold module cache)"
mkdir -p "$out/bin" "$out/crd"
(cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 "$go" build -trimpath -ldflags='-s -w' \
	-o "$out/bin/koord-scheduler.new" ./cmd/koord-scheduler)
mv "$out/bin/koord-scheduler.new" "$out/bin/koord-scheduler"
rm -f "$out/crd"/*.yaml
cp "$src"/config/crd/bases/*.yaml "$out/crd/"
cp "$src/config/manager/scheduler-config.yaml" "$out/scheduler-config.yaml"
echo "$stamp" >"$out/STAMP"
echo "koord-scheduler built in $out"
