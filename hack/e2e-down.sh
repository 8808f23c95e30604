#!/usr/bin/env bash
# Takes down what hack/e2e-up.sh brought up and leaves the host as it was: the
# processes (the Locus agent, scheduler, kubelet, every container and shim,
# containerd, the control plane), the mounts under the run directory, the cgroups
# the kubelet and runc made (children first) and the node's own, the kubelet's
# sysctls, the host paths that did not exist before, the network namespace and
# $LOCUS_E2E_DIR itself. Safe to run again, and on a half-started node. Fails,
# naming them, when any process of the node survives: one in its cgroup, in a
# container's, in its network namespace, or of its programs naming the run
# directory.
set -uo pipefail
# shellcheck source=hack/e2e-lib.sh
. "$(dirname "$0")/e2e-lib.sh"
t0=$(now)
if [ ! -d "$E2E_DIR" ] && [ ! -e "/run/netns/$E2E_NETNS" ] && { [ -z "$E2E_CG" ] || [ ! -d "$E2E_CG" ]; } &&
	[ -z "$(named_pids)" ]; then
	log "nothing to take down"
	exit 0
fi
status=0

stop agent
stop scheduler
stop controller-manager
stop kubelet 30
log "down: the node's components stopped in $(since "$t0") s"
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
log "down: the containers killed in $(since "$t0") s"
stop containerd 20
stop apiserver
stop etcd
log "down: containerd and the control plane stopped in $(since "$t0") s"
# Whatever is left, whatever state up reached: shims and the containers they
# still run, a component up had not recorded yet, anything a component started.
sweep || status=1

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

log "down: mounts and cgroups removed in $(since "$t0") s"
if [ -n "$E2E_CG" ] && [ -d "$E2E_CG" ]; then
	rmdir "$E2E_CG" 2>/dev/null || { log "cannot remove $E2E_CG: $(cgroup_pids "$E2E_CG" | tr '\n' ' ')"; status=1; }
fi

# The cgroup mounts' propagation, as up found it.
if [ -f "$E2E_DIR/host/cgroup-propagation" ]; then
	while read -r target prop; do
		case "$prop" in
		private | shared | slave | unbindable) mount "--make-$prop" "$target" || { log "cannot make $target $prop again"; status=1; } ;;
		*) ;; # a combination such as "private,slave": left as it is now
		esac
	done <"$E2E_DIR/host/cgroup-propagation"
fi

# The kubelet's sysctls.
if [ -f "$E2E_DIR/host/sysctls" ]; then
	while IFS= read -r kv; do
		sysctl -q -w "$kv" >/dev/null || { log "cannot restore $kv"; status=1; }
	done <"$E2E_DIR/host/sysctls"
fi

# The check for leftovers: nothing of the node runs any more, and nothing runs in
# its network namespace (a process there that the node did not start, a shell
# entered with nsenter, is named but not killed: it keeps the namespace alive).
left=$(node_pids)
if [ -e "/run/netns/$E2E_NETNS" ]; then
	left=$({
		echo "$left"
		ip netns pids "$E2E_NETNS" 2>/dev/null
	} | sed '/^$/d' | sort -un)
fi
if [ -n "$left" ]; then
	log "LEFTOVER: processes of the node still run after down:"
	# shellcheck disable=SC2086 # one pid a word
	describe $left
	status=1
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
