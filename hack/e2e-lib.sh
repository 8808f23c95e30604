# shellcheck shell=bash disable=SC2034 # sourced: the variables are used by the scripts
# Shared by hack/e2e*.sh (sourced, not run): where things live and how the
# end-to-end node's processes are started and stopped.
#
# Every process runs in the network namespace $E2E_NETNS, made by e2e-up.sh: the
# fixed ports below never collide with the host's, the kubelet's iptables chains
# vanish with the namespace, and the node IP is an address of that namespace.
# Mounts, cgroups and sysctls are the host's: e2e-down.sh puts them back.

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
E2E_DIR=${LOCUS_E2E_DIR:-/tmp/locus-e2e}
E2E_NETNS=locus-e2e
E2E_NODE=locus-e2e
E2E_NODE_IP=198.51.100.10 # TEST-NET-2, only inside the namespace
E2E_BIN=$repo/.cache/e2e/bin
E2E_IMAGES=$repo/.cache/e2e/images
CP_BIN=${LOCUS_CONTROLPLANE_BIN:-$repo/.cache/controlplane/bin}
CTRD_SOCK=$E2E_DIR/containerd/containerd.sock
APISERVER_PORT=6443
ETCD_PORT=2379
KUBELET_PORT=10250
KUBELET_HEALTHZ_PORT=10248
AGENT_METRICS=127.0.0.1:19316
# LOCUS_E2E_RUNTIME picks the node's runtime: containerd, Debian's 1.6 (no NRI: the
# agent pins containers after they start), or containerd2, 2.x built from
# tools/containerd2 by e2e-build.sh (NRI on: containers are created pinned).
# A node that is up keeps the runtime it was brought up with (for restart and down).
E2E_RUNTIME=${LOCUS_E2E_RUNTIME:-$(cat "$E2E_DIR/runtime" 2>/dev/null || echo containerd)}
CTRD2_BIN=$repo/.cache/e2e/containerd2/bin
# The NRI socket: under the run directory, not containerd 2's /var/run/nri, so it
# goes with the node. The agent is given it with either runtime.
NRI_SOCK=$E2E_DIR/nri/nri.sock
PAUSE_IMAGE=locus.local/e2e/pause:1
WORKLOAD_IMAGE=locus.local/e2e/workload:1
# The node inside a QEMU guest (hack/e2e-guest.sh) runs from an initramfs: no
# overlay module (LOCUS_E2E_SNAPSHOTTER=native), no pivot_root out of rootfs
# (LOCUS_E2E_NO_PIVOT=1), no veth module (LOCUS_E2E_NODE_LINK=lo: the node IP on
# the namespace's loopback) and every vCPU emulated (LOCUS_E2E_WAIT_SCALE
# multiplies each component's start-up wait).
E2E_SNAPSHOTTER=${LOCUS_E2E_SNAPSHOTTER:-overlayfs}
E2E_NO_PIVOT=${LOCUS_E2E_NO_PIVOT:-0}
E2E_NODE_LINK=${LOCUS_E2E_NODE_LINK:-veth}
E2E_WAIT_SCALE=${LOCUS_E2E_WAIT_SCALE:-1}
# chart (default): Locus installed by its Helm chart from the images; host: the
# agent and scheduler as host processes, quicker to rebuild for the inner loop.
E2E_MODE=${LOCUS_E2E_MODE:-chart}
# The pods' network: bridge (cni_config), or none (no CNI configuration: only
# host-network pods run, and the node stays NotReady; the QEMU guest's, whose
# initramfs has no bridge module). The pods' addresses on the bridge:
E2E_CNI=${LOCUS_E2E_CNI:-bridge}
E2E_POD_CIDR=${LOCUS_E2E_POD_CIDR:-10.244.0.0/24}

# The kernel tunables the kubelet sets at start (kubelet/cm's setupKernelTunables),
# saved by up and restored by down.
E2E_SYSCTLS=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
# Host paths the node uses whatever its configuration says; down removes the ones
# that up found missing.
E2E_HOST_PATHS=(/var/lib/kubelet /var/log/containers /var/log/pods /run/containerd
	/opt/containerd /var/lib/containerd /usr/libexec/kubernetes /etc/kubernetes /var/lib/cni
	/run/mount) # /run/mount: libmount's utab, made by the first mount(8) that needs it
# The cgroup hierarchies (under /sys/fs/cgroup) where the kubelet and runc create
# kubepods: every v1 controller the kubelet uses, the named systemd one and the v2
# mount of a hybrid host.
E2E_CGROUP_TOP=kubepods

now() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.1f\", $(now) - $1}"; }

log() { echo "e2e: $*" >&2; }
die() {
	log "$*"
	exit 1
}

in_ns() { nsenter --net="/run/netns/$E2E_NETNS" -- "$@"; }

# apt_install PKG...: installs the Debian packages whose command of the same
# name is missing (CI's fresh machine), all of them with one apt-get.
apt_install() {
	local p
	for p in "$@"; do
		command -v "$p" >/dev/null && continue
		command -v apt-get >/dev/null || die "$* missing, and no apt-get to install them"
		log "installing $* with apt-get"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
		return
	done
}

# The node's own cgroup: every process started for the node (each component, and
# what it starts: containerd's shims, runc, mount helpers) is in it, so down finds
# all of them whatever state up reached, and a pid is the component's only while
# it is listed there (a recycled pid is not; a zombie is not). It sets no limit,
# and lives where it takes no controller's files from the components: the
# cgroup2 mount of a hybrid host (no controller enabled), the cgroup2 root of a
# v2 host, or a v1 named (systemd) or pids hierarchy. Containers leave it for their kubepods cgroups, which are the node's
# too (up refuses to start while any exists).
e2e_cgroup_root() {
	local r
	for r in /sys/fs/cgroup/unified /sys/fs/cgroup /sys/fs/cgroup/systemd /sys/fs/cgroup/pids; do
		[ -f "$r/cgroup.procs" ] && echo "$r" && return 0
	done
	return 1
}
E2E_CG=$(e2e_cgroup_root) && E2E_CG+=/locus-e2e || E2E_CG=

# in_cgroup PID: the process is alive and in the node's cgroup.
in_cgroup() { [ -n "$1" ] && grep -qx -- "$1" "$E2E_CG/cgroup.procs" 2>/dev/null; }

# start NAME CMD...: runs CMD in the namespace and the node's cgroup, in a session
# of its own (it outlives this script), output in logs/NAME.log, pid in
# pids/NAME; returns once that pid is known. setsid --fork always forks (without
# it, setsid execs in place only when the caller is not a process-group leader,
# which a shell with job control makes every background job), so the pid this
# shell sees is never the component's. The component's pid is written by the
# component's own process: the sh below joins the cgroup, writes its pid and
# execs CMD, which keeps it. When it cannot join, it writes "failed" instead and
# runs nothing: no process of the node runs outside the cgroup.
start() {
	local name=$1 pidf i pid
	shift
	pidf=$E2E_DIR/pids/$name
	mkdir -p "$E2E_DIR/logs" "$E2E_DIR/pids"
	rm -f "$pidf"
	# shellcheck disable=SC2016 # expanded by that sh
	nsenter --net="/run/netns/$E2E_NETNS" -- setsid --fork sh -c '
		if echo $$ >"$1/cgroup.procs"; then echo $$ >"$2.new"; else echo failed >"$2.new"; fi
		mv "$2.new" "$2" && grep -qx $$ "$2" || exit 1
		shift 2
		exec "$@"' sh "$E2E_CG" "$pidf" "$@" </dev/null >>"$E2E_DIR/logs/$name.log" 2>&1 ||
		die "cannot start $name"
	# Under load a fork and two execs can take a while; give up only after 30 s.
	for ((i = 0; i < 300; i++)); do
		pid=$(cat "$pidf" 2>/dev/null || true) # not there yet: keep waiting
		case "$pid" in
		"") sleep 0.1 ;;
		failed) break ;;
		*) return 0 ;;
		esac
	done
	log "$name did not start; end of its log:"
	tail -n 15 "$E2E_DIR/logs/$name.log" >&2
	return 1
}

running() {
	local pid
	pid=$(cat "$E2E_DIR/pids/$1" 2>/dev/null) || return 1
	in_cgroup "$pid"
}

# stop NAME [GRACE]: SIGTERM, then SIGKILL after GRACE seconds (default 10).
# Only a pid still in the node's cgroup is signalled.
stop() {
	local name=$1 grace=${2:-10} pid i
	pid=$(cat "$E2E_DIR/pids/$name" 2>/dev/null) || return 0
	if in_cgroup "$pid"; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < grace * 10; i++)); do
			in_cgroup "$pid" || break
			sleep 0.1
		done
		if in_cgroup "$pid"; then
			log "$name (pid $pid) ignored SIGTERM for ${grace}s: SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			for ((i = 0; i < 50; i++)); do
				in_cgroup "$pid" || break
				sleep 0.1
			done
		fi
	fi
	rm -f "$E2E_DIR/pids/$name"
}

# wait_for NAME SECONDS CMD...: polls CMD every 0.2 s; gives up at once when the
# component NAME (if started by start) has left the node's cgroup, i.e. exited.
wait_for() {
	local name=$1 secs=$(($2 * E2E_WAIT_SCALE)) i
	shift 2
	for ((i = 0; i < secs * 5; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		if [ -f "$E2E_DIR/pids/$name" ] && ! running "$name"; then
			log "$name exited; end of its log:"
			tail -n 15 "$E2E_DIR/logs/$name.log" >&2
			return 1
		fi
		sleep 0.2
	done
	log "$name not ready after ${secs}s"
	return 1
}

# cgroup_pids DIR: the processes in DIR and every cgroup below it.
cgroup_pids() {
	[ -d "$1" ] || return 0
	find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -un
}

# kubepods_pids: the processes in the kubepods trees of every hierarchy: the
# node's containers. Only meaningful once up found none (host/absent is written
# after that check).
kubepods_pids() {
	local h
	[ -f "$E2E_DIR/host/absent" ] || return 0
	for h in /sys/fs/cgroup/*/; do
		cgroup_pids "$h$E2E_CGROUP_TOP"
	done | sort -un
}

# named_pids: processes of the node's programs whose command line names the run
# directory: what was started for a node in it, found without the cgroup (one
# that left it, or a node started by an older checkout of these scripts). Not a
# shell or an editor that merely names a log file. Reads /proc with builtins
# only, so the scan finds nothing of its own.
named_pids() {
	local d p a
	local -a args
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		case $p in "$$" | "$BASHPID") continue ;; esac
		mapfile -d '' -t args 2>/dev/null <"$d/cmdline" || continue
		[ "${#args[@]}" -gt 0 ] || continue
		case "${args[0]##*/}" in
		etcd | kube-apiserver | kube-controller-manager | kubelet | locus | locus-scheduler | \
			containerd | containerd-shim* | runc) ;;
		*) continue ;;
		esac
		for a in "${args[@]}"; do
			if [[ $a == *"$E2E_DIR"* ]]; then
				echo "$p"
				break
			fi
		done
	done
}

# node_pids: every process of the node that down kills: its cgroup, its
# containers' cgroups and its programs naming the run directory.
node_pids() {
	{
		cgroup_pids "$E2E_CG"
		kubepods_pids
		named_pids
	} | sort -un
}

# describe PID...: one line per process, for the log.
describe() {
	local p
	for p in "$@"; do
		[ -r "/proc/$p/cmdline" ] || continue
		log "  pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-200)"
	done
}

# sweep: SIGKILL every process of the node until none is left (10 s at most);
# what still runs after that is printed and sweep fails.
sweep() {
	local i pids
	for ((i = 0; i < 100; i++)); do
		pids=$(node_pids)
		[ -n "$pids" ] || return 0
		# shellcheck disable=SC2086 # one pid a word
		kill -KILL $pids 2>/dev/null
		sleep 0.1
	done
	log "processes of the node that survive SIGKILL:"
	# shellcheck disable=SC2086
	describe $pids
	return 1
}

kubectl_e2e() { in_ns "$CP_BIN/kubectl" --kubeconfig "$E2E_DIR/kubeconfig" --cache-dir "$E2E_DIR/kubectl-cache" "$@"; }

# The components, each startable again by "hack/e2e.sh restart NAME".
start_etcd() {
	start etcd "$CP_BIN/etcd" --name=e2e --data-dir="$E2E_DIR/etcd" \
		--listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls=http://127.0.0.1:2380 --initial-advertise-peer-urls=http://127.0.0.1:2380 \
		--initial-cluster=e2e=http://127.0.0.1:2380 --unsafe-no-fsync --log-level=warn
}

start_apiserver() {
	local p=$E2E_DIR/pki
	# As internal/kubetest's, with the admission plugin that needs the absent node
	# lifecycle controller off. ServiceAccount stays on: the chart's pods
	# authenticate with their service accounts' tokens. The kubelet (kubectl exec,
	# logs) by the node's IP: nothing resolves its name.
	start apiserver "$CP_BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
		--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
		--tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$p/sa.key" --service-account-signing-key-file="$p/sa.key" \
		--service-cluster-ip-range=10.0.0.0/24 --authorization-mode=RBAC --allow-privileged=true \
		--disable-admission-plugins=TaintNodesByCondition \
		--endpoint-reconciler-type=none --profiling=false \
		--kubelet-preferred-address-types=InternalIP,Hostname
}

start_controller_manager() {
	# Only what Deployments, the agent's DaemonSet, the chart's uninstall Job and
	# service-account tokens need
	# (each namespace's default service account and kube-root-ca.crt), and no node
	# lifecycle controller: a node whose kubelet stops answering (a restart test)
	# must not be tainted or have its pods evicted.
	start controller-manager "$E2E_BIN/kube-controller-manager" --kubeconfig="$E2E_DIR/kubeconfig" \
		--controllers=deployment-controller,replicaset-controller,daemonset-controller,job-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller,root-ca-certificate-publisher-controller \
		--root-ca-file="$E2E_DIR/pki/ca.crt" --leader-elect=false --secure-port=0 --use-service-account-credentials=false
}

start_containerd() {
	if [ "$E2E_RUNTIME" = containerd2 ]; then
		# Its shim is found on PATH.
		start containerd env PATH="$CTRD2_BIN:$PATH" "$CTRD2_BIN/containerd" --config "$E2E_DIR/containerd/config.toml"
	else
		start containerd /usr/bin/containerd --config "$E2E_DIR/containerd/config.toml"
	fi
}

start_kubelet() {
	start kubelet "$E2E_BIN/kubelet" --config="$E2E_DIR/kubelet/config.yaml" \
		--kubeconfig="$E2E_DIR/kubeconfig" --root-dir="$E2E_DIR/kubelet/root" \
		--cert-dir="$E2E_DIR/kubelet/pki" --hostname-override="$E2E_NODE" --node-ip="$E2E_NODE_IP" --v=2
}

# decision_key writes the key file the scheduler signs its decisions with and the
# agent verifies them by (docs/security.md), once: in chart mode the chart's
# Secret's (a host agent started there verifies the chart's scheduler), else a
# random key of the node's own.
decision_key() {
	local f=$E2E_DIR/decision-keys
	[ -s "$f" ] && return 0
	(
		umask 077
		if [ "$(sed -n 's/^LOCUS_E2E_MODE=//p' "$E2E_DIR/env" 2>/dev/null)" = chart ]; then
			kubectl_e2e -n "$E2E_NAMESPACE" get secret "$E2E_RELEASE-decision-key" -o jsonpath='{.data.keys}' | base64 -d >"$f"
		else
			printf 'e2e %s\n' "$(head -c 32 /dev/urandom | base64 -w0)" >"$f"
		fi
	)
}

# LOCUS_E2E_SCHEDULER_ARGS and LOCUS_E2E_AGENT_ARGS add flags, split on spaces.
# shellcheck disable=SC2086
start_scheduler() {
	decision_key
	start scheduler "$E2E_BIN/locus-scheduler" --kubeconfig="$E2E_DIR/kubeconfig" \
		--leader-elect=false --secure-port=0 --decision-key-file="$E2E_DIR/decision-keys" ${LOCUS_E2E_SCHEDULER_ARGS:-}
}

# shellcheck disable=SC2086
start_agent() {
	decision_key
	# The node's cgroups are the host's: the agent writes them as the DaemonSet would.
	start agent "$E2E_BIN/locus" agent --node-name="$E2E_NODE" --kubeconfig="$E2E_DIR/kubeconfig" \
		--state-dir="$E2E_DIR/agent" --cgroup-driver=cgroupfs --metrics-addr="$AGENT_METRICS" \
		--kubelet-dir="$E2E_DIR/kubelet/root" --kubelet-config="$E2E_DIR/kubelet/config.yaml" \
		--memory-v1-soft-limit --nri-socket="$NRI_SOCK" --decision-key-file="$E2E_DIR/decision-keys" ${LOCUS_E2E_AGENT_ARGS:-}
}

kubelet_healthy() { in_ns curl -fsS "http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz"; }
node_registered() { kubectl_e2e get node "$E2E_NODE"; }
ctr_e2e() {
	if [ "$E2E_RUNTIME" = containerd2 ]; then
		"$CTRD2_BIN/ctr" --address "$CTRD_SOCK" "$@"
	else
		ctr --address "$CTRD_SOCK" "$@"
	fi
}

# containerd_config: the CRI plugin on cgroupfs with the project's pause image,
# everything under $E2E_DIR but the shims' sockets (/run/containerd/s, fixed in
# containerd 1.6). restrict_oom_score_adj: this machine's processes lack
# CAP_SYS_RESOURCE, and without it runc fails ("can't get final child's PID from
# pipe") when asked to lower a container's oom_score_adj.
containerd_config() {
	cat <<EOF2
version = 2
root = "$E2E_DIR/containerd/root"
state = "$E2E_DIR/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$CTRD_SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$E2E_DIR/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "$E2E_SNAPSHOTTER"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        NoPivotRoot = $([ "$E2E_NO_PIVOT" = 1 ] && echo true || echo false)
        Root = "$E2E_DIR/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$E2E_DIR/containerd/net.d"
EOF2
}

# cni_config: the pods' network, a bridge in the node's network namespace (so
# down's removal of the namespace removes it) with addresses from host-local. No
# masquerade and no port mapping: the pods talk to each other and to the node,
# which is all a test needs, and nothing is written to the host's iptables.
cni_config() {
	cat <<EOF2
{
  "cniVersion": "1.0.0",
  "name": "locus-e2e",
  "plugins": [
    {"type": "bridge", "bridge": "cni-locus0", "isGateway": true, "ipMasq": false,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$E2E_POD_CIDR"}]],
              "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$E2E_DIR/cni"}},
    {"type": "loopback"}
  ]
}
EOF2
}

# containerd2_config: containerd 2.x reads the same version 2 configuration (it
# migrates it), with NRI on and its socket under the run directory. Its NRI plugin
# requires the internal plugins: with io.containerd.internal.v1.tracing disabled
# it is silently left out.
containerd2_config() {
	containerd_config | sed 's/, "io.containerd.internal.v1.tracing"//'
	cat <<EOF2
[plugins."io.containerd.nri.v1.nri"]
  disable = false
  socket_path = "$NRI_SOCK"
  plugin_path = "$E2E_DIR/nri/plugins"
  plugin_config_path = "$E2E_DIR/nri/conf.d"
  plugin_registration_timeout = "5s"
  plugin_request_timeout = "2s"
EOF2
}

# kubelet_config: what this cgroup v1 host needs (failCgroupV1, failSwapOn,
# cgroupfs, oomScoreAdj 0 for want of CAP_SYS_RESOURCE), the seeds' CPU manager
# policy none, and no image garbage collection (the images cannot be pulled again).
# LOCUS_E2E_CPU_MANAGER=static is the variant beside the kubelet's static CPU
# manager (TestKubeletStaticCPUManager): CPU 0 reserved for the system, which
# the static policy requires.
# LOCUS_E2E_MAX_PODS: the kubelet's maxPods (default 110, the kubelet's own
# default), raised for the 300-pod churn (TestChurnPodBesideHost).
# A container's restart back-off stops at 2 s (KubeletCrashLoopBackOffMax)
# instead of growing 10 s, 20 s, 40 s ... to 5 min: the tests that kill the
# agent's container wait for the kubelet to restart it, and with the default
# three kills cost 70 s of waiting.
kubelet_config() {
	local cpu_manager="cpuManagerPolicy: none" max_pods=${LOCUS_E2E_MAX_PODS:-110}
	[[ $max_pods =~ ^[1-9][0-9]*$ ]] || die "LOCUS_E2E_MAX_PODS: $max_pods is not a number of pods"
	case "${LOCUS_E2E_CPU_MANAGER:-none}" in
	none) ;;
	static) cpu_manager=$(printf 'cpuManagerPolicy: static\nreservedSystemCPUs: "0"') ;;
	*) die "LOCUS_E2E_CPU_MANAGER: ${LOCUS_E2E_CPU_MANAGER} is not none or static" ;;
	esac
	cat <<EOF2
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: /
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
maxPods: $max_pods
$cpu_manager
port: $KUBELET_PORT
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
readOnlyPort: 0
containerRuntimeEndpoint: unix://$CTRD_SOCK
podLogsDir: $E2E_DIR/kubelet/pod-logs
volumePluginDir: $E2E_DIR/kubelet/volume-plugins
makeIPTablesUtilChains: false
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
syncFrequency: 10s
serializeImagePulls: false
featureGates: {KubeletCrashLoopBackOffMax: true}
crashLoopBackOff: {maxContainerRestartPeriod: 2s}
EOF2
}

# shellcheck source=hack/e2e-chart.sh
. "$repo/hack/e2e-chart.sh"
