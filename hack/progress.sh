# shellcheck shell=bash
# Sourced by the long builds (hack/images.sh, hack/helm-check.sh,
# hack/build-controlplane.sh, hack/e2e-build.sh): a cold Go build of Kubernetes
# or helm takes 20 to 40 minutes on two CPUs, and silence that long looks hung.
#
#   step NAME CMD [ARG...]
#
# runs CMD, saying on stderr when it starts, every PROGRESS_EVERY seconds
# (default 60) while it runs, and when it ends with its duration; it returns
# CMD's status. PROGRESS_PREFIX (default the script's name) begins each line.

step() {
	local name=$1 t0 rc=0 beat
	shift
	local prefix=${PROGRESS_PREFIX:-$(basename "$0" .sh)}
	t0=$(date +%s)
	echo "$prefix: $name: started" >&2
	(
		s=
		trap '[ -z "$s" ] || kill "$s" 2>/dev/null; exit 0' TERM
		while :; do
			# Not on the caller's output: a sleep the TERM below misses (it came
			# between the fork and s=) must not hold the caller's pipe open.
			sleep "${PROGRESS_EVERY:-60}" </dev/null >/dev/null 2>&1 &
			s=$!
			wait "$s"
			echo "$prefix: $name: still running after $(($(date +%s) - t0)) s" >&2
		done
	) &
	beat=$!
	"$@" || rc=$?
	kill "$beat" 2>/dev/null || true
	wait "$beat" 2>/dev/null || true
	if [ "$rc" = 0 ]; then
		echo "$prefix: $name: done in $(($(date +%s) - t0)) s" >&2
	else
		echo "$prefix: $name: failed (exit $rc) after $(($(date +%s) - t0)) s" >&2
	fi
	return "$rc"
}
