#!/usr/bin/env bash
# Prints the version a build stamps into the binaries (locus version,
# locus_build_info): the chart's appVersion for a release, that is when HEAD
# carries the tag v<appVersion> and nothing is uncommitted (CONTRIBUTING.md,
# Releasing); otherwise <appVersion>-dev+<commit>, with .dirty when the tree
# has uncommitted changes, so that no two commits' builds say the same.
# Outside a git checkout it is <appVersion>-dev.
#
#   hack/version.sh              the version
#   hack/version.sh --image-tag  the same as an image tag, whose grammar has no
#                                '+': <appVersion>-dev.<commit>[.dirty]
set -euo pipefail
case "${1:-}" in
--image-tag)
	v=$("$0")
	echo "${v//+/.}"
	exit 0
	;;
"") ;;
*)
	echo "usage: hack/version.sh [--image-tag]" >&2
	exit 2
	;;
esac
repo=$(cd "$(dirname "$0")/.." && pwd)
app=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$repo/deploy/helm/locus/Chart.yaml")
[ -n "$app" ] || {
	echo "version: no appVersion in deploy/helm/locus/Chart.yaml" >&2
	exit 1
}
commit=$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null) || {
	echo "$app-dev"
	exit 0
}
dirty=
[ -z "$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=.dirty
if [ -z "$dirty" ] && git -C "$repo" tag --points-at HEAD 2>/dev/null | grep -qx "v$app"; then
	echo "$app"
else
	echo "$app-dev+$commit$dirty"
fi
