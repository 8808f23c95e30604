#!/usr/bin/env bash
# The end-to-end tests on a real node of this machine (docs/e2e.md).
#
#   hack/e2e.sh test            build, bring the node up, run test/e2e, take it down (make e2e)
#   hack/e2e.sh build|up|down   one step (hack/e2e-build.sh, -up.sh, -down.sh)
#   hack/e2e.sh restart NAME    restart agent, scheduler, kubelet, containerd or controller-manager
#   hack/e2e.sh stop|start NAME the same in two steps (a test acting while it is down)
#   hack/e2e.sh kubectl ARGS    kubectl on the node's cluster
#   hack/e2e.sh go-test ARGS    go test ./test/e2e against the node that is up
set -euo pipefail
# shellcheck source=hack/e2e-lib.sh
. "$(dirname "$0")/e2e-lib.sh"

go_test() {
	# The test binary runs in the node's network namespace, where the apiserver is;
	# it is built outside it, where the module proxy is reachable.
	LOCUS_E2E=1 LOCUS_E2E_DIR=$E2E_DIR ${GO:-go} test -count=1 -v -timeout 30m \
		-exec "nsenter --net=/run/netns/$E2E_NETNS --" ./test/e2e "$@"
}

cmd=${1:-}
shift || true

# One real node per machine: its directory, network namespace, ports and host
# paths are fixed, so a second run (another checkout's) waits for the first.
case "$cmd" in
test | up | down)
	if [ -z "${LOCUS_E2E_LOCKED:-}" ]; then
		log "waiting for the node lock (/run/lock/locus-e2e.lock)"
		exec env LOCUS_E2E_LOCKED=1 flock /run/lock/locus-e2e.lock "$0" "$cmd" "$@"
	fi
	;;
esac
case "$cmd" in
build) exec "$repo/hack/e2e-build.sh" ;;
up) exec "$repo/hack/e2e-up.sh" ;;
down) exec "$repo/hack/e2e-down.sh" ;;
kubectl) kubectl_e2e "$@" ;;
go-test)
	cd "$repo"
	go_test "$@"
	;;
restart)
	name=${1:?restart what: agent, scheduler, kubelet, containerd, controller-manager}
	case "$name" in
	agent | scheduler | kubelet | containerd | controller-manager) ;;
	*) die "cannot restart $name" ;;
	esac
	running "$name" || die "$name is not running"
	t0=$(now)
	stop "$name" 30
	"start_${name//-/_}"
	case "$name" in
	agent) wait_for agent 30 in_ns curl -fsS "http://$AGENT_METRICS/healthz" ;;
	kubelet) wait_for kubelet 60 kubelet_healthy ;;
	containerd) wait_for containerd 30 ctr_e2e version ;;
	*) sleep 1 && running "$name" ;;
	esac || die "$name did not come back"
	log "$name restarted in $(since "$t0") s"
	;;
stop)
	name=${1:?stop what: agent}
	[ "$name" = agent ] || die "cannot stop $name"
	running "$name" || die "$name is not running"
	stop "$name" 30
	;;
start)
	name=${1:?start what: agent}
	[ "$name" = agent ] || die "cannot start $name"
	! running "$name" || die "$name is running"
	start_agent
	wait_for agent 30 in_ns curl -fsS "http://$AGENT_METRICS/healthz" || die "agent did not come up"
	;;
test)
	cd "$repo"
	t0=$(now)
	"$repo/hack/e2e-build.sh"
	t1=$(now)
	"$repo/hack/e2e-up.sh"
	rc=0
	# Down whatever happens, Ctrl-C included; a failed down fails the run.
	trap '"$repo/hack/e2e-down.sh" || rc=1; log "build $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s, everything $(since "$t0") s"; exit $rc' EXIT
	trap 'rc=130; exit' INT TERM
	go_test "$@" || rc=$?
	;;
*)
	sed -n '2,10p' "$0" >&2
	exit 2
	;;
esac
