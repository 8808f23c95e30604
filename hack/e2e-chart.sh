# shellcheck shell=bash disable=SC2034 # sourced by hack/e2e-lib.sh: the variables are used by the scripts
# Locus on the end-to-end node the way a cluster runs it: `helm install` of
# deploy/helm/locus with the images hack/e2e-build.sh built and hack/e2e-up.sh
# imported into the node's containerd. The agent is the chart's DaemonSet pod, the
# scheduler its Deployment, with the chart's own mounts, security context and RBAC;
# the values below change only what this node needs.

E2E_RELEASE=locus
E2E_NAMESPACE=locus-system
HELM=${LOCUS_HELM:-$repo/.cache/bin/helm}

# helm_e2e ARGS: helm on the node's cluster, its state under the run directory.
helm_e2e() {
	in_ns env HOME="$E2E_DIR/helm" HELM_CACHE_HOME="$E2E_DIR/helm/cache" HELM_CONFIG_HOME="$E2E_DIR/helm/config" \
		HELM_DATA_HOME="$E2E_DIR/helm/data" "$HELM" --kubeconfig "$E2E_DIR/kubeconfig" "$@"
}

# chart_values: what differs from the chart's defaults here, and why.
# - image.tag: the tag of the images hack/e2e-build.sh built (hack/images.sh's TAG);
# - hostNetwork, apiServer: the node has no kube-proxy to route the kubernetes
#   Service, so Locus's pods use the node's network and reach the API server at
#   its own address;
# - cgroupDriver, stateDir, kubeletDir/kubeletConfig, nri.socket, --memory-v1-soft-limit: as
#   the host-process agent (the state dir under the run directory, where the tests
#   read it; the node kubelet's own root and config);
# - no CPU requests: the seeds' pods ask for both of this node's CPUs;
# - no ack-slo ConfigMaps from the chart (the default): each scenario applies the seeds' own;
# - the scheduler runs as default-scheduler (this cluster has no kube-scheduler;
#   docs/scheduler.md), one replica without leader election.
# LOCUS_E2E_AGENT_ARGS and LOCUS_E2E_SCHEDULER_ARGS add flags, split on spaces.
chart_values() {
	local a
	echo "image: {tag: \"$(cat "$E2E_IMAGES/TAG")\"}"
	echo "apiServer: {host: 127.0.0.1, port: \"$APISERVER_PORT\"}"
	echo "agent:"
	echo "  hostNetwork: true"
	echo "  cgroupDriver: cgroupfs"
	echo "  stateDir: $E2E_DIR/agent"
	echo "  kubeletDir: $E2E_DIR/kubelet/root"
	echo "  kubeletConfig: $E2E_DIR/kubelet/config.yaml"
	echo "  nri: {socket: $NRI_SOCK}"
	echo "  metricsPort: ${AGENT_METRICS##*:}"
	echo "  resources: {requests: {cpu: null, memory: 64Mi}}"
	echo "  extraArgs:"
	echo "  - --memory-v1-soft-limit"
	for a in ${LOCUS_E2E_AGENT_ARGS:-}; do echo "  - \"$a\""; done
	echo "sloConfig: {manage: none}"
	echo "scheduler:"
	echo "  enabled: true"
	echo "  hostNetwork: true"
	echo "  schedulerName: default-scheduler"
	echo "  leaderElect: false"
	echo "  resources: {requests: {cpu: null, memory: 128Mi}}"
	echo "  extraArgs: []"
	for a in ${LOCUS_E2E_SCHEDULER_ARGS:-}; do echo "  - \"$a\""; done
}

# bind_scheduler: the cluster's only scheduler is the chart's, so its own pod has
# nobody to schedule it; it is bound here, as a kubeadm cluster's kube-scheduler
# (a static pod) needs no scheduling either. Every later pod it schedules itself,
# its successors in a rolling update included.
bind_scheduler() {
	local pod="" i
	for ((i = 0; i < 300; i++)); do
		pod=$(kubectl_e2e -n "$E2E_NAMESPACE" get pods -l app.kubernetes.io/component=scheduler \
			--field-selector spec.nodeName= -o jsonpath='{.items[0].metadata.name}' 2>/dev/null) || pod=""
		[ -n "$pod" ] && break
		sleep 0.2
	done
	[ -n "$pod" ] || {
		log "no scheduler pod to bind"
		return 1
	}
	kubectl_e2e create -f - >/dev/null <<EOF
apiVersion: v1
kind: Binding
metadata: {name: $pod, namespace: $E2E_NAMESPACE}
target: {apiVersion: v1, kind: Node, name: $E2E_NODE}
EOF
}

# chart_ready: both rolled out and the agent answering on its metrics port.
chart_ready() {
	kubectl_e2e -n "$E2E_NAMESPACE" rollout status "deploy/$E2E_RELEASE-scheduler" --timeout=120s >/dev/null &&
		kubectl_e2e -n "$E2E_NAMESPACE" rollout status "ds/$E2E_RELEASE-agent" --timeout=120s >/dev/null &&
		wait_for agent 60 in_ns curl -fsS "http://$AGENT_METRICS/healthz"
}

# chart_install: installs the release and waits until it serves.
chart_install() {
	mkdir -p "$E2E_DIR/helm"
	chart_values >"$E2E_DIR/helm/values.yaml"
	helm_e2e install "$E2E_RELEASE" "$repo/deploy/helm/locus" --namespace "$E2E_NAMESPACE" --create-namespace \
		-f "$E2E_DIR/helm/values.yaml" >"$E2E_DIR/logs/helm-install.log" 2>&1 || {
		log "helm install failed:"
		cat "$E2E_DIR/logs/helm-install.log" >&2
		return 1
	}
	bind_scheduler && chart_ready
}

# chart_restart agent|scheduler: the agent's container is stopped with SIGTERM, as
# a host process would be, and the kubelet starts it again in the same pod (a new
# pod is what helm upgrade makes; test/e2e covers that). The scheduler's pod is
# deleted and its Deployment makes the next, which is bound as at install.
chart_restart() {
	local component=$1 sel id restarts i
	sel=app.kubernetes.io/component=$component
	if [ "$component" = scheduler ]; then
		kubectl_e2e -n "$E2E_NAMESPACE" delete pod -l "$sel" --wait=true >/dev/null || return 1
		bind_scheduler && chart_ready
		return
	fi
	id=$(kubectl_e2e -n "$E2E_NAMESPACE" get pod -l "$sel" -o jsonpath='{.items[0].status.containerStatuses[0].containerID}') || return 1
	restarts=$(kubectl_e2e -n "$E2E_NAMESPACE" get pod -l "$sel" -o jsonpath='{.items[0].status.containerStatuses[0].restartCount}') || return 1
	ctr_e2e -n k8s.io tasks kill -s SIGTERM "${id#containerd://}" || return 1
	for ((i = 0; i < 300; i++)); do
		[ "$(kubectl_e2e -n "$E2E_NAMESPACE" get pod -l "$sel" -o \
			jsonpath='{.items[0].status.containerStatuses[0].restartCount}/{.items[0].status.containerStatuses[0].ready}')" != \
			"$((restarts + 1))/true" ] || break
		sleep 0.2
	done
	chart_ready
}

# node_mode: chart or host, as the node that is up was brought up.
node_mode() { sed -n 's/^LOCUS_E2E_MODE=//p' "$E2E_DIR/env" 2>/dev/null; }

# chart_stop_agent: the agent down while the cluster goes on, as an operator
# would take it off a node: its DaemonSet is given a node selector no node
# matches, and its pod goes (SIGTERM; the DaemonSet still exists, so the agent
# keeps its state and restores nothing). chart_start_agent takes the selector
# away and waits until the new pod serves.
E2E_AGENT_OFF_LABEL=locus.io/e2e-agent-off
chart_stop_agent() {
	local i
	kubectl_e2e -n "$E2E_NAMESPACE" patch "ds/$E2E_RELEASE-agent" --type=merge \
		-p "{\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":{\"$E2E_AGENT_OFF_LABEL\":\"true\"}}}}}" >/dev/null || return 1
	for ((i = 0; i < 600; i++)); do
		[ -n "$(kubectl_e2e -n "$E2E_NAMESPACE" get pods -l app.kubernetes.io/component=agent -o name 2>/dev/null)" ] || return 0
		sleep 0.2
	done
	return 1
}
chart_start_agent() {
	kubectl_e2e -n "$E2E_NAMESPACE" patch "ds/$E2E_RELEASE-agent" --type=json \
		-p "[{\"op\":\"remove\",\"path\":\"/spec/template/spec/nodeSelector/${E2E_AGENT_OFF_LABEL//\//~1}\"}]" >/dev/null &&
		chart_ready
}
