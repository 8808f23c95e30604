#!/usr/bin/env bash
# Runs every Go fuzz target of the main module, one after the other, each for
# FUZZTIME (a duration like 10s, or a count of executions like 1000000x):
# `go test -fuzz` takes one target at a time. The targets are found by their
# `func FuzzXxx(f *testing.F)` declarations, so a new one is never left out.
#
#   hack/fuzz.sh                      every target, FUZZTIME each (default 10s)
#   hack/fuzz.sh pkg/cgroup           the targets of some packages
#   hack/fuzz.sh --list               print "package target" and exit
#
# FUZZJOBS is the number of targets fuzzed at once (default 1; make test uses
# 2). FUZZPARALLEL is the number of fuzzing workers per target (default 1: the
# CI machines have 2 CPUs). FUZZMINIMIZETIME bounds the shrinking of each new
# interesting input (go test's default, 60s, spends most of a long campaign
# shrinking the mebibyte seeds' offspring; executions spent there do not count). With FUZZLOG=dir each target's output is kept as
# dir/<package>.<target>.log. A crasher is written by go test under the
# package's testdata/fuzz/<target>/, where it becomes a regression seed, and
# fails the run. A count (FUZZTIME=Nx) has no wall-clock end, so the fuzz
# coordinator's deadline race (see below) cannot happen at all. The last line per target gives its executions and time.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1
go=${GO:-go}
fuzztime=${FUZZTIME:-10s}
parallel=${FUZZPARALLEL:-1}
minimize=${FUZZMINIMIZETIME:-60s}

targets() {
	[ $# -gt 0 ] || set -- pkg cmd
	grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' "$@" |
		sed -E 's#^(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]+).*#\1 \2#' | sort -u
}

if [ "${1:-}" = --list ]; then
	shift
	targets "$@"
	exit 0
fi

list=$(targets "$@")
[ -n "$list" ] || { echo "no fuzz targets found" >&2; exit 1; }
results=$(mktemp -d)
bins=$(mktemp -d)
trap 'rm -rf "$results" "$bins"' EXIT
# Where go test -fuzz keeps each package's generated corpus (go clean -fuzzcache
# empties it): the test binaries below are given the same.
fuzzcache=$("$go" env GOCACHE)/fuzz
module=$("$go" list -m)

# fuzz_binary PKG LOG: the package's test binary built for fuzzing (coverage
# instrumented, as go test -fuzz builds it), once for all its targets: go test
# -fuzz builds and links it again for each, which took most of a short run's
# time. Targets of one package running at once wait for the one build; a
# failed build is in LOG.
fuzz_binary() {
	local pkg=$1 log=$2 bin=$bins/${1//\//_}.test
	(
		flock 9
		[ -x "$bin" ] || "$go" test -c -fuzz . -o "$bin" "./$pkg" >"$log" 2>&1
	) 9>"$bin.lock" && [ -x "$bin" ] && echo "$bin"
}

# fuzz_one PKG TARGET fuzzes one target and prints its verdict line; a failed
# target's verdict begins with FAIL and carries the tail of its log.
fuzz_one() {
	local pkg=$1 target=$2 log corpus before after rc last bin
	log=$(mktemp)
	corpus="$pkg/testdata/fuzz/$target"
	before=$(ls "$corpus" 2>/dev/null | wc -l)
	# As go test runs it: in the package's directory (where a crasher is
	# written), with the package's corpus in the fuzz cache.
	if bin=$(fuzz_binary "$pkg" "$log"); then
		(cd "$pkg" && "$bin" -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "$fuzztime" \
			-test.fuzzminimizetime "$minimize" -test.parallel "$parallel" -test.paniconexit0 -test.timeout 10m \
			-test.fuzzcachedir "$fuzzcache/$module/$pkg") >"$log" 2>&1
		rc=$?
	else
		rc=1
	fi
	if [ -n "${FUZZLOG:-}" ]; then
		mkdir -p "$FUZZLOG"
		cp "$log" "$FUZZLOG/${pkg//\//_}.$target.log"
	fi
	# The fuzzer's last progress line: "fuzz: elapsed: 10s, execs: 123456 (12345/sec), ..."
	last=$(grep -Eo 'elapsed: [0-9a-z.]+, execs: [0-9]+' "$log" | tail -1)
	after=$(ls "$corpus" 2>/dev/null | wc -l)
	# Go 1.26's fuzz coordinator can fail a duration-bounded run at its end
	# with a bare "context deadline exceeded" although no input failed (a
	# race between its two contexts, go.dev/issue/75804, fixed in Go 1.27).
	# That, and only that, with no new crasher written, is not a failure.
	if [ "$rc" -ne 0 ] && [ "$after" = "$before" ] &&
		grep -q '^    context deadline exceeded$' "$log" &&
		[ "$(grep -c -- '--- FAIL' "$log")" = 1 ]; then
		echo "ok   $pkg $target ${last} (the coordinator's deadline race, go.dev/issue/75804; no input failed)"
	elif [ "$rc" -ne 0 ]; then
		echo "FAIL $pkg $target ${last}"
		tail -40 "$log"
	else
		echo "ok   $pkg $target ${last}"
	fi
	rm -f "$log"
}

# FUZZJOBS targets run at once (default 1): each target's fuzzing is one
# worker process, so a machine with more CPUs than one worker and one build
# need runs several. On two CPUs it saves little (docs/reliability.md).
# Verdicts are printed whole, in the order the targets finish.
jobs=${FUZZJOBS:-1}
start=$SECONDS
n=0
while read -r pkg target; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	n=$((n + 1))
	out="$results/$(printf '%04d' "$n")"
	( fuzz_one "$pkg" "$target" >"$out.part"; mv "$out.part" "$out"; flock "$results" cat "$out" ) &
done <<<"$list"
wait

failed=()
for f in "$results"/*; do
	line=$(head -1 "$f")
	# shellcheck disable=SC2086 # the verdict's words: FAIL PKG TARGET ...
	case "$line" in FAIL*) set -- $line; failed+=("$2 $3") ;; esac
done
echo "$(wc -l <<<"$list") targets in $((SECONDS - start))s, FUZZTIME $fuzztime, $jobs at a time"
if [ "${#failed[@]}" -gt 0 ]; then
	printf 'failed: %s\n' "${failed[@]}" >&2
	exit 1
fi
