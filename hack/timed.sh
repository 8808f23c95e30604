#!/usr/bin/env bash
# Runs one step of make test and says how long it took, so that a run's log
# shows where its time went (docs/reliability.md, Test levels):
#
#   hack/timed.sh NAME CMD [ARG...]
#
# When CMD ends it prints "step NAME: N s" on stderr ("step NAME: failed
# (exit RC) after N s" when it failed) and, when STEP_TIMES names a file,
# appends the same line there: make test prints that file at its end, the
# whole run's steps and sub-steps in the order they ended. It returns CMD's
# status.
set -uo pipefail
name=${1:?usage: hack/timed.sh NAME CMD [ARG...]}
shift
t0=$SECONDS
"$@"
rc=$?
if [ "$rc" = 0 ]; then
	line="step $name: $((SECONDS - t0)) s"
else
	line="step $name: failed (exit $rc) after $((SECONDS - t0)) s"
fi
echo "$line" >&2
if [ -n "${STEP_TIMES:-}" ]; then
	echo "$line" >>"$STEP_TIMES"
fi
exit "$rc"
