#!/usr/bin/env bash
# Writes deploy/helm/locus/README.md (what `helm show readme` prints) and the values
# table of docs/kubernetes.md from the chart's values.yaml and values.schema.json.
# Run it after changing a value; tools/chartreadme's test fails while they differ.
#
#   hack/chart-readme.sh          rewrite both
#   hack/chart-readme.sh -check   exit 1 if either differs
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
exec "${GO:-go}" run ./tools/chartreadme -root "$repo" "$@"
