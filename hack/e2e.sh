#!/usr/bin/env bash
# The end-to-end tests on a real node of this machine (docs/e2e.md).
#
#   hack/e2e.sh test            build, bring the node up, run test/e2e, take it down (make e2e)
#   hack/e2e.sh build|up|down   one step (hack/e2e-build.sh, -up.sh, -down.sh)
#   hack/e2e.sh restart NAME    restart agent, scheduler, kubelet, containerd or controller-manager
#   hack/e2e.sh stop|start NAME the same in two steps (a test acting while it is down)
#   hack/e2e.sh start|stop host-agent  chart mode: the agent as a host process (its pod stopped)
#   hack/e2e.sh kubectl ARGS    kubectl on the node's cluster
#   hack/e2e.sh helm ARGS       helm on the node's cluster
#   hack/e2e.sh install         helm install Locus as up does (after helm uninstall)
#   hack/e2e.sh bind-scheduler  bind the chart's pending scheduler pod (a test's own install)
#   hack/e2e.sh settle          bind it, then wait for the release to serve (after helm upgrade)
#   hack/e2e.sh go-test ARGS    go test ./test/e2e against the node that is up
#   hack/e2e.sh cpu-manager POLICY  the node's kubelet restarted on CPU manager policy none or static
#
# LOCUS_E2E_THEN_STATIC=REGEX: test, once its tests ran, switches the node's
# kubelet to the static CPU manager (cpu-manager static) and runs the tests
# REGEX names there, instead of bringing a node up again for that variant.
set -euo pipefail
# shellcheck source=hack/e2e-lib.sh
. "$(dirname "$0")/e2e-lib.sh"

go_test() {
	# The test binary runs in the node's network namespace, where the apiserver is;
	# it is built outside it, where the module proxy is reachable.
	LOCUS_E2E=1 LOCUS_E2E_DIR=$E2E_DIR ${GO:-go} test -count=1 -v -timeout 30m \
		-exec "nsenter --net=/run/netns/$E2E_NETNS --" ./test/e2e "$@"
}

# test_bin ARGS: test/e2e's test binary, built once by test for all its runs
# (go test would link it again for each), run as go test runs it (in the
# package's directory), ARGS as go test's (-run REGEX becomes -test.run REGEX).
test_bin=$repo/.cache/e2e/e2e.test
test_bin() {
	local a args=()
	for a in "$@"; do
		case "$a" in
		-test.*) args+=("$a") ;;
		-*) args+=("-test.${a#-}") ;;
		*) args+=("$a") ;;
		esac
	done
	(cd "$repo/test/e2e" && LOCUS_E2E=1 LOCUS_E2E_DIR=$E2E_DIR \
		in_ns "$test_bin" -test.paniconexit0 -test.v -test.timeout 30m "${args[@]}")
}

# cpu_manager POLICY: the node's kubelet restarted on CPU manager policy POLICY
# (none, or static with CPU 0 reserved: kubelet_config), as an operator changes
# it: the kubelet stopped, its config rewritten, its CPU manager checkpoint
# (which names the old policy, and which the kubelet refuses to start with)
# removed; then the agent restarted, which reads the kubelet's config at its
# start. The pods still running are admitted again by the new policy, as at
# any kubelet start. The tests' own pods are gone by then: each test deletes
# its namespace's pods at its end.
cpu_manager() {
	local policy=$1 t0 max_pods
	case "$policy" in
	none | static) ;;
	*) die "cpu-manager: $policy is not none or static" ;;
	esac
	t0=$(now)
	running kubelet || die "kubelet is not running"
	stop kubelet 30
	# The rest of the config as the node was brought up (its maxPods).
	max_pods=$(sed -n 's/^maxPods: //p' "$E2E_DIR/kubelet/config.yaml")
	LOCUS_E2E_CPU_MANAGER=$policy LOCUS_E2E_MAX_PODS=$max_pods kubelet_config >"$E2E_DIR/kubelet/config.yaml.new"
	mv "$E2E_DIR/kubelet/config.yaml.new" "$E2E_DIR/kubelet/config.yaml"
	rm -f "$E2E_DIR/kubelet/root/cpu_manager_state"
	start_kubelet
	wait_for kubelet 60 kubelet_healthy || die "kubelet not healthy on CPU manager policy $policy"
	"$repo/hack/e2e.sh" restart agent || die "agent did not come back"
	log "kubelet on CPU manager policy $policy in $(since "$t0") s"
}

cmd=${1:-}
shift || true

# One real node per machine: its directory, network namespace, ports and host
# paths are fixed, so a second run (another checkout's) waits for the first.
# -o: the lock's descriptor is not handed down, so a process the run started
# and failed to stop cannot hold the lock for ever (down would report it).
case "$cmd" in
test | up | down)
	if [ -z "${LOCUS_E2E_LOCKED:-}" ]; then
		log "waiting for the node lock (/run/lock/locus-e2e.lock)"
		exec env LOCUS_E2E_LOCKED=1 flock -o /run/lock/locus-e2e.lock "$0" "$cmd" "$@"
	fi
	;;
esac
case "$cmd" in
build) exec "$repo/hack/e2e-build.sh" ;;
up) exec "$repo/hack/e2e-up.sh" ;;
down) exec "$repo/hack/e2e-down.sh" ;;
kubectl) kubectl_e2e "$@" ;;
helm) helm_e2e "$@" ;;
install) chart_install ;;
bind-scheduler) bind_scheduler ;;
settle) bind_scheduler && chart_ready ;;
go-test)
	cd "$repo"
	go_test "$@"
	;;
cpu-manager) cpu_manager "${1:?cpu-manager what: none or static}" ;;
restart)
	name=${1:?restart what: agent, scheduler, kubelet, containerd, controller-manager}
	case "$name" in
	agent | scheduler | kubelet | containerd | controller-manager) ;;
	*) die "cannot restart $name" ;;
	esac
	t0=$(now)
	# In chart mode the agent and the scheduler are pods: their controllers restart them.
	if [ "$(node_mode)" = chart ] && [[ $name == agent || $name == scheduler ]]; then
		chart_restart "$name" || die "$name did not come back"
		log "$name restarted in $(since "$t0") s"
		exit 0
	fi
	running "$name" || die "$name is not running"
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
	if [ "$name" = host-agent ]; then
		# The host-process agent a chart-mode node runs beside its stopped pod.
		running agent || die "no host agent is running"
		stop agent 30
		exit 0
	fi
	[ "$name" = agent ] || die "cannot stop $name"
	if [ "$(node_mode)" = chart ]; then
		chart_stop_agent || die "the agent's pod did not go"
		exit 0
	fi
	running "$name" || die "$name is not running"
	stop "$name" 30
	;;
start)
	name=${1:?start what: agent}
	case "$name" in
	agent) ;;
	host-agent)
		# Chart mode: the same agent as a host process, as LOCUS_E2E_MODE=host runs
		# it (its pod stopped first: they share the metrics port and state dir).
		[ "$(node_mode)" = chart ] || die "host-agent: the node is not in chart mode (start agent)"
		name=agent
		;;
	*) die "cannot start $name" ;;
	esac
	if [ "$(node_mode)" = chart ] && [ "$1" = agent ]; then
		chart_start_agent || die "the agent's pod did not come back"
		exit 0
	fi
	! running "$name" || die "$name is running"
	start_agent
	wait_for agent 30 in_ns curl -fsS "http://$AGENT_METRICS/healthz" || die "agent did not come up"
	;;
test)
	cd "$repo"
	t0=$(now)
	"$repo/hack/e2e-build.sh"
	${GO:-go} test -c -o "$test_bin" ./test/e2e
	t1=$(now)
	"$repo/hack/e2e-up.sh"
	rc=0
	# Down whatever happens, Ctrl-C included; a failed down fails the run.
	trap '"$repo/hack/e2e-down.sh" || rc=1; log "build $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s, everything $(since "$t0") s"; exit $rc' EXIT
	trap 'rc=130; exit' INT TERM
	t2=$(now)
	test_bin "$@" || rc=$?
	log "tests in $(since "$t2") s"
	if [ -n "${LOCUS_E2E_THEN_STATIC:-}" ]; then
		# Run whatever the first tests did: both verdicts in one run.
		t2=$(now)
		# In a subshell: a failed switch ends it, not this run (whose trap takes the node down).
		if (cpu_manager static); then
			test_bin -run "$LOCUS_E2E_THEN_STATIC" || rc=$?
		else
			rc=1
		fi
		log "the static CPU manager's tests in $(since "$t2") s"
	fi
	;;
*)
	sed -n '2,20p' "$0" >&2
	exit 2
	;;
esac
