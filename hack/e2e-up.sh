#!/usr/bin/env bash
# Brings up a real one-node Kubernetes cluster on this machine for the end-to-end
# tests (test/e2e): etcd and kube-apiserver (hack/build-controlplane.sh), the kubelet
# and kube-controller-manager v1.33.13 (hack/e2e-build.sh), containerd and runc from
# Debian, the project's pause and workload images, and Locus: by default installed
# with its Helm chart from its images (hack/e2e-chart.sh), with LOCUS_E2E_MODE=host
# the agent and locus-scheduler as host processes. Runs as root; hack/e2e-down.sh
# undoes everything.
# Everything of the run lives in $LOCUS_E2E_DIR (default /tmp/locus-e2e).
set -euo pipefail
# shellcheck source=hack/e2e-lib.sh
. "$(dirname "$0")/e2e-lib.sh"

t0=$(now)
[ "$(id -u)" = 0 ] || die "run as root (the node writes cgroups, mounts and sysctls)"
# containerd 1.6 and runc 1.1 from Debian, installed here when missing (CI's
# fresh machine); the shims, runc and ctr come with them. containerd 2 needs
# only runc from Debian.
debs=(runc)
tools=(runc curl openssl nsenter setsid ip sysctl)
[ "$E2E_RUNTIME" = containerd2 ] || debs+=(containerd) tools+=(containerd containerd-shim-runc-v2 ctr)
[ "$E2E_MODE" != chart ] || tools+=(findmnt)
# The pods' network: Debian's CNI plugins, which install no command on PATH.
case "$E2E_CNI" in
bridge) [ -x /usr/lib/cni/bridge ] || debs+=(containernetworking-plugins) ;;
none) ;;
*) die "LOCUS_E2E_CNI=$E2E_CNI: want bridge or none" ;;
esac
apt_install "${debs[@]}"
for b in "${tools[@]}"; do
	command -v "$b" >/dev/null || die "$b missing"
done
case "$E2E_MODE" in
chart) locus=("$E2E_IMAGES/locus.oci.tar" "$E2E_IMAGES/locus-scheduler.oci.tar" "$E2E_IMAGES/TAG" "$HELM") ;;
host) locus=("$E2E_BIN/locus") ;;
*) die "LOCUS_E2E_MODE=$E2E_MODE: want chart or host" ;;
esac
if [ "$E2E_RUNTIME" = containerd2 ]; then
	for b in containerd containerd-shim-runc-v2 ctr; do
		[ -x "$CTRD2_BIN/$b" ] || die "$CTRD2_BIN/$b missing: run LOCUS_E2E_RUNTIME=containerd2 hack/e2e-build.sh"
	done
fi
for b in "$CP_BIN/etcd" "$CP_BIN/kube-apiserver" "$CP_BIN/kubectl" "$E2E_BIN/kubelet" \
	"$E2E_BIN/kube-controller-manager" "$E2E_IMAGES/pause.tar" "$E2E_IMAGES/workload.tar" "${locus[@]}"; do
	[ -e "$b" ] || die "$b missing: run hack/e2e-build.sh (and hack/build-controlplane.sh)"
done
# A run directory with no process of its node alive was left by a run killed
# before its down (a SIGKILL, a machine going down). Under the node lock
# no other up is half-way through making one, so it is taken down as down would,
# and this run goes on. A node with any process alive is someone's: left alone.
if [ -e "$E2E_DIR" ] && [ -n "${LOCUS_E2E_LOCKED:-}" ] && [ -z "$(node_pids)" ]; then
	log "$E2E_DIR exists but no process of its node runs: left by a run that was killed; taking it down"
	bash "$repo/hack/e2e-down.sh" || die "could not take down the node left in $E2E_DIR"
fi
[ ! -e "$E2E_DIR" ] || die "$E2E_DIR exists: a node is up (hack/e2e-down.sh takes it down)"
[ ! -e "/run/netns/$E2E_NETNS" ] || die "network namespace $E2E_NETNS exists: run hack/e2e-down.sh"
[ -n "$E2E_CG" ] || die "no cgroup hierarchy to keep the node's processes in (/sys/fs/cgroup/unified, a cgroup2 /sys/fs/cgroup, systemd or pids)"
[ ! -e "$E2E_CG" ] || die "$E2E_CG exists: a node was not taken down (hack/e2e-down.sh)"
for h in /sys/fs/cgroup/*/; do
	[ ! -e "$h$E2E_CGROUP_TOP" ] || die "${h}$E2E_CGROUP_TOP exists: another kubelet runs here, or a node was not taken down"
done

mkdir -p "$E2E_DIR"/{host,pki,agent,logs,pids,containerd,kubelet,nri}
echo "$E2E_RUNTIME" >"$E2E_DIR/runtime"
# What down restores: the kubelet's sysctls and the host paths that did not exist.
for s in "${E2E_SYSCTLS[@]}"; do
	echo "$s=$(sysctl -n "$s")"
done >"$E2E_DIR/host/sysctls"
# /run/netns first, /run/mount (E2E_HOST_PATHS' last) last: down unmounts the former with umount(8),
# which makes the latter.
for p in /run/netns "${E2E_HOST_PATHS[@]}"; do
	[ -e "$p" ] || echo "$p"
done >"$E2E_DIR/host/absent"
# Armed from here: a failed start leaves nothing behind.
# shellcheck disable=SC2154 # rc is set inside the trap
trap 'rc=$?; if [ $rc != 0 ]; then log "start failed; taking it down"; bash "$repo/hack/e2e-down.sh"; fi' EXIT
mkdir "$E2E_CG"
# The chart mounts the host's cgroups into the agent with HostToContainer
# propagation, which needs the host's mount shared or slave, as systemd makes every
# mount; this host's may be private. Down puts back each mount's propagation.
if [ "$E2E_MODE" = chart ]; then
	findmnt -rn -o TARGET,PROPAGATION | awk '$1 == "/sys/fs/cgroup" || index($1, "/sys/fs/cgroup/") == 1' \
		>"$E2E_DIR/host/cgroup-propagation"
	mount --make-rshared /sys/fs/cgroup
fi

ip netns add "$E2E_NETNS"
in_ns ip link set lo up
case "$E2E_NODE_LINK" in
veth)
	in_ns ip link add e2e0 type veth peer name e2e1
	in_ns ip addr add "$E2E_NODE_IP/24" dev e2e0
	in_ns ip link set e2e1 up
	in_ns ip link set e2e0 up
	;;
lo) in_ns ip addr add "$E2E_NODE_IP/32" dev lo ;;
*) die "LOCUS_E2E_NODE_LINK=$E2E_NODE_LINK: want veth or lo" ;;
esac

# Throw-away credentials: a CA, the apiserver's serving certificate (also for the
# node IP), the admin's client certificate (every component acts as the admin)
# and the service-account signing key.
(
	cd "$E2E_DIR/pki"
	exec 2>openssl.log
	# A configuration of its own: the CA's extensions do not depend on the
	# host's openssl.cnf, which a guest's initramfs does not have.
	printf '%s\n' '[req]' 'distinguished_name = dn' 'x509_extensions = ca' '[dn]' '[ca]' \
		'basicConstraints = critical,CA:true' 'keyUsage = critical,keyCertSign,cRLSign' \
		'subjectKeyIdentifier = hash' >openssl.cnf
	export OPENSSL_CONF=$PWD/openssl.cnf
	openssl ecparam -name prime256v1 -genkey -noout -out ca.key
	openssl req -x509 -new -key ca.key -subj /CN=locus-e2e-ca -days 2 -out ca.crt
	cert() { # NAME SUBJECT EXTENSIONS
		openssl ecparam -name prime256v1 -genkey -noout -out "$1.key"
		openssl req -new -key "$1.key" -subj "$2" -out "$1.csr"
		printf '%s\n' "$3" >"$1.ext"
		openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile "$1.ext" -out "$1.crt"
	}
	cert apiserver /CN=kube-apiserver "subjectAltName=IP:127.0.0.1,IP:$E2E_NODE_IP,DNS:localhost,DNS:kubernetes.default.svc
extendedKeyUsage=serverAuth"
	cert admin "/O=system:masters/CN=locus-e2e-admin" "extendedKeyUsage=clientAuth"
	openssl genrsa -out sa.key 2048
)
b64() { base64 -w0 <"$1"; }
cat >"$E2E_DIR/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "https://127.0.0.1:$APISERVER_PORT", certificate-authority-data: $(b64 "$E2E_DIR/pki/ca.crt")}}]
users: [{name: admin, user: {client-certificate-data: $(b64 "$E2E_DIR/pki/admin.crt"), client-key-data: $(b64 "$E2E_DIR/pki/admin.key")}}]
contexts: [{name: e2e, context: {cluster: e2e, user: admin}}]
current-context: e2e
EOF

start_etcd
wait_for etcd 30 in_ns curl -fsS "http://127.0.0.1:$ETCD_PORT/health" || die "etcd not healthy"
start_apiserver
wait_for apiserver 90 kubectl_e2e get namespace kube-system || die "kube-apiserver not ready"
# The agent publishes a NodeResourceTopology, and the scheduler reads them.
kubectl_e2e apply --server-side -f "$repo/deploy/helm/locus/crds/" >/dev/null
kubectl_e2e wait --for=condition=Established --timeout=30s crd/noderesourcetopologies.topology.node.k8s.io >/dev/null
t_cp=$(now)

if [ "$E2E_RUNTIME" = containerd2 ]; then
	containerd2_config >"$E2E_DIR/containerd/config.toml"
else
	containerd_config >"$E2E_DIR/containerd/config.toml"
fi
mkdir -p "$E2E_DIR/containerd/net.d"
[ "$E2E_CNI" = none ] || cni_config >"$E2E_DIR/containerd/net.d/10-locus-e2e.conflist"
start_containerd
wait_for containerd 30 ctr_e2e version || die "containerd not ready"
import=(--no-unpack=false)
# containerd 2's transfer service unpacks for its configured snapshotter only;
# another one is unpacked by ctr itself (--local).
[ "$E2E_SNAPSHOTTER" = overlayfs ] || import+=(--snapshotter "$E2E_SNAPSHOTTER")
[ "$E2E_SNAPSHOTTER" = overlayfs ] || [ "$E2E_RUNTIME" != containerd2 ] || import+=(--local)
for img in pause.tar workload.tar locus.oci.tar locus-scheduler.oci.tar; do
	[ "$E2E_MODE" = chart ] || [[ $img != *.oci.tar ]] || continue
	ctr_e2e -n k8s.io images import "${import[@]}" "$E2E_IMAGES/$img" >/dev/null
done
kubelet_config >"$E2E_DIR/kubelet/config.yaml"
start_kubelet
wait_for kubelet 60 kubelet_healthy || die "kubelet not healthy"
wait_for kubelet 60 node_registered || die "node $E2E_NODE not registered"
start_controller_manager
if [ "$E2E_MODE" = chart ]; then
	t_locus=$(now)
	chart_install || die "Locus not installed"
	log "Locus installed by its chart in $(since "$t_locus") s"
else
	if [ -x "$E2E_BIN/locus-scheduler" ]; then
		start_scheduler
	else
		log "no locus-scheduler binary: pods are not scheduled (only the agent scenarios can run)"
	fi
	start_agent
	wait_for agent 30 in_ns curl -fsS "http://$AGENT_METRICS/healthz" || die "agent not healthy"
fi

cat >"$E2E_DIR/env" <<EOF
LOCUS_E2E_DIR=$E2E_DIR
LOCUS_E2E_KUBECONFIG=$E2E_DIR/kubeconfig
LOCUS_E2E_NODE=$E2E_NODE
LOCUS_E2E_AGENT_METRICS=$AGENT_METRICS
LOCUS_E2E_WORKLOAD_IMAGE=$WORKLOAD_IMAGE
LOCUS_E2E_MODE=$E2E_MODE
LOCUS_E2E_RELEASE=$E2E_RELEASE
LOCUS_E2E_NAMESPACE=$E2E_NAMESPACE
LOCUS_E2E_CONTAINERD=$CTRD_SOCK
LOCUS_E2E_RUNTIME=$E2E_RUNTIME
EOF
trap - EXIT
log "runtime: $E2E_RUNTIME"
log "node $E2E_NODE up in $(since "$t0") s (control plane $(awk "BEGIN{printf \"%.1f\", $t_cp - $t0}") s); $E2E_DIR/env"
