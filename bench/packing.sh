#!/usr/bin/env bash
# Prints the published packing comparison (one table per scenario) and the
# side-by-side decision latency on a 70 %-busy NPS4 machine.
# PODS sets the stream length (default 5000); extra arguments go to cmd/packing.
set -euo pipefail
cd "$(dirname "$0")"
go run ./cmd/packing -pods "${PODS:-5000}" "$@"
go test -run=NONE -bench=NPS4Busy70 -benchtime=2000x ./scenario
