#!/usr/bin/env bash
# Takes down what hack/e2e-up.sh brought up and leaves the host as it was: the
# processes (the Locus agent, scheduler, kubelet, every container and shim,
# containerd, the control plane), the mounts under the run directory, the cgroups
# the kubelet and runc made (children first), the kubelet's sysctls, the host paths
# that did not exist before, the network namespace and $LOCUS_E2E_DIR itself.
# Safe to run again, and on a half-started node.
set -uo pipefail
# shellcheck source=hack/e2e-lib.sh
. "$(dirname "$0")/e2e-lib.sh"
t0=$(now)
[ -d "$E2E_DIR" ] || [ -e "/run/netns/$E2E_NETNS" ] || {
	log "nothing to take down"
	exit 0
}
status=0

stop agent
stop scheduler
stop controller-manager
stop kubelet 30
# Kill every container with its shim while containerd still answers.
if running containerd; then
	for c in $(ctr_e2e -n k8s.io tasks ls -q 2>/dev/null); do
		ctr_e2e -n k8s.io tasks kill -s SIGKILL "$c" >/dev/null 2>&1
	done
	for c in $(ctr_e2e -n k8s.io tasks ls -q 2>/dev/null); do
		for _ in $(seq 50); do
			ctr_e2e -n k8s.io tasks delete "$c" >/dev/null 2>&1 && break
			sleep 0.1
		done
	done
	for c in $(ctr_e2e -n k8s.io containers ls -q 2>/dev/null); do
		ctr_e2e -n k8s.io containers delete "$c" >/dev/null 2>&1
	done
fi
stop containerd 20
# Shims, and anything they still run, that outlived the above: each names our
# containerd's socket or run directory on its command line.
for pid in $(pgrep -f "containerd-shim-runc-v2 .*$E2E_DIR" || true); do
	log "killing leftover shim $pid"
	kill -KILL "$pid" 2>/dev/null
done
stop apiserver
stop etcd

# Mounts under the run directory (the kubelet bind-mounts its root dir onto itself;
# overlay rootfs and shm mounts of containers), deepest first.
if [ -d "$E2E_DIR" ]; then
	for m in $(findmnt -rn -o TARGET | grep -F "$E2E_DIR" | sort -r); do
		umount "$m" 2>/dev/null || umount -l "$m" || { log "cannot unmount $m"; status=1; }
	done
fi

# Cgroups: the kubepods trees in every hierarchy, children first. Only after up
# found none, which is what the absent list records.
if [ -f "$E2E_DIR/host/absent" ]; then
	for h in /sys/fs/cgroup/*/; do
		top=$h$E2E_CGROUP_TOP
		[ -d "$top" ] || continue
		for _ in 1 2 3 4 5; do
			find "$top" -depth -type d -exec rmdir {} + 2>/dev/null
			[ -d "$top" ] || break
			sleep 1 # a process of a killed container may take a moment to die
		done
		[ ! -d "$top" ] || { log "cannot remove $top: $(find "$top" -name cgroup.procs -exec cat {} + | tr '\n' ' ')"; status=1; }
	done
fi

# The kubelet's sysctls.
if [ -f "$E2E_DIR/host/sysctls" ]; then
	while IFS= read -r kv; do
		sysctl -q -w "$kv" >/dev/null || { log "cannot restore $kv"; status=1; }
	done <"$E2E_DIR/host/sysctls"
fi

ip netns del "$E2E_NETNS" 2>/dev/null
# Host paths the node made.
if [ -f "$E2E_DIR/host/absent" ]; then
	while IFS= read -r p; do
		if [ -e "$p" ]; then
			# ip netns add bind-mounts /run/netns onto itself.
			while findmnt -rn -o TARGET | grep -qx "$p"; do umount "$p" || break; done
			if findmnt -rn -o TARGET | grep -q "^$p\(/\|$\)"; then
				log "$p still has mounts; left in place"
				status=1
				continue
			fi
			rm -rf "$p"
		fi
	done <"$E2E_DIR/host/absent"
fi

if [ "$status" = 0 ]; then
	rm -rf "$E2E_DIR"
	log "down in $(since "$t0") s"
else
	log "down with problems (above); $E2E_DIR kept for its logs"
fi
exit "$status"
