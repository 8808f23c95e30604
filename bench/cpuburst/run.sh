#!/usr/bin/env bash
# CPU Burst: a bursty workload under a CFS quota, side by side in one run.
# `locus stress --peaks` (every EVERY, THREADS threads each spend WORK of CPU
# time at once: a request fanned out to workers) runs in a cgroup of its own
# whose quota is what the kubelet gives a LIMIT limit (QUOTA us per 100 ms).
# Rounds alternate the modes, each for RUN seconds:
#
#   off    policy none: no burst buffer, the quota as it is
#   burst  policy cpuBurstOnly: cpu.cfs_burst_us written by `locus agent --once`
#   quota  policy cfsQuotaBurstOnly: the agent runs (--resync 1s) and raises
#          the quota while the group is throttled and the node's shared pool
#          is below SHARE %
#
# The cgroup is a HostConfig `cgroup:` workload: Locus writes its files, the
# script only sets the quota (as the kubelet would) and moves the load in.
# Prints one CSV line per round and mode, then the medians per mode.
# Needs root, cgroup v1 and Go. ROUNDS (5), RUN (20), THREADS (2), WORK
# (40ms), EVERY (500ms), LIMIT (500m), QUOTA (50000), SHARE (90), MODES,
# WEIGHT (unset: the default cpu.shares 1024).
set -euo pipefail
rounds=${ROUNDS:-5} run=${RUN:-20} threads=${THREADS:-2} work=${WORK:-40ms} every=${EVERY:-500ms}
limit=${LIMIT:-500m} quota=${QUOTA:-50000} share=${SHARE:-90} modes=${MODES:-off burst quota}
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
bin=$tmp/locus
(cd "$repo" && go build -o "$bin" ./cmd/locus)
root=/sys/fs/cgroup
[ -f $root/cpu/cpu.cfs_quota_us ] || { echo "needs cgroup v1 with the cpu controller at $root/cpu" >&2; exit 1; }
parent=locus-bench-cpuburst-$$
rel=$parent/peaks
agent_pid=
cleanup() {
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	for c in cpu cpuacct cpuset memory; do
		rmdir $root/$c/$rel $root/$c/$parent 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
for c in cpu cpuacct cpuset memory; do
	mkdir -p $root/$c/$rel
done
for f in cpuset.cpus cpuset.mems; do
	cat $root/cpuset/$f >$root/cpuset/$parent/$f
	cat $root/cpuset/$f >$root/cpuset/$rel/$f
done
echo "$quota" >$root/cpu/$rel/cpu.cfs_quota_us
# WEIGHT, when set, is the cpu.shares of the load's parent against the
# host's other top-level groups: a busy host then takes less from the peaks,
# and the quota, not the run queue, is what holds them back.
[ -n "${WEIGHT:-}" ] && echo "$WEIGHT" >$root/cpu/$parent/cpu.shares

config() { # policy
	cat >"$tmp/host.yaml" <<EOF
apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
workloads:
- name: peaks
  cgroup: $rel
  qosClass: LS
  resources: {limits: {cpu: $limit}}
  cpuBurst: {policy: $1, sharePoolThresholdPercent: $share}
EOF
	touch -d '-1 hour' "$tmp/host.yaml" # settled: the agent acts on it at once
}
agent() { "$bin" agent --standalone --config "$tmp/host.yaml" --state-dir "$tmp/state" --metrics-addr "" "$@"; }
once() { agent --once >"$tmp/once.log" 2>&1 || { echo "locus agent --once failed:" >&2; cat "$tmp/once.log" >&2; return 1; }; }
stat() { awk -v k="$1" '$1 == k {print $2}' $root/cpu/$rel/cpu.stat; }

echo "# $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" >&2
echo "# weight ${WEIGHT:-1024 (default)}; load: threads=$threads work=$work every=$every under quota ${quota}us/100ms (limit $limit)" >&2
echo "mode,round,peaks,p50_ms,p99_ms,max_ms,nr_periods,nr_throttled,throttled_ms,nr_bursts,burst_file,quota_end,loadavg"
for round in $(seq "$rounds"); do
	order=($modes)
	[ $((round % 2)) = 0 ] && order=($(printf '%s\n' $modes | tac))
	for mode in "${order[@]}"; do
		config none
		once # back to no buffer and the base quota
		case $mode in
		burst) config cpuBurstOnly && once ;;
		quota)
			config cfsQuotaBurstOnly
			# The binary itself in the background, so that $! is the agent.
			"$bin" agent --standalone --config "$tmp/host.yaml" --state-dir "$tmp/state" --metrics-addr "" --resync 1s >"$tmp/agent.log" 2>&1 &
			agent_pid=$!
			sleep 1
			;;
		esac
		p0=$(stat nr_periods) t0=$(stat nr_throttled) tt0=$(stat throttled_time) b0=$(stat nr_bursts)
		out=$(sh -c "echo \$\$ >$root/cpu/$rel/cgroup.procs; echo \$\$ >$root/cpuacct/$rel/cgroup.procs; exec $bin stress --peaks $threads --peak-work $work --peak-every $every --duration ${run}s")
		p1=$(stat nr_periods) t1=$(stat nr_throttled) tt1=$(stat throttled_time) b1=$(stat nr_bursts)
		qend=$(cat $root/cpu/$rel/cpu.cfs_quota_us) burstf=$(cat $root/cpu/$rel/cpu.cfs_burst_us)
		if [ -n "$agent_pid" ]; then
			echo "# round $round quota: $(grep -o '"cfsQuotaBurst": *"[^"]*"' "$tmp/state/status.json" | head -1)" >&2
			kill "$agent_pid"
			wait "$agent_pid" 2>/dev/null || true
			agent_pid=
		fi
		read -r n p50 p99 mx < <(echo "$out" | sed -E 's/.* ([0-9]+) peak\(s\).*p50 ([0-9.]+)ms p99 ([0-9.]+)ms max ([0-9.]+)ms.*/\1 \2 \3 \4/')
		echo "$mode,$round,$n,$p50,$p99,$mx,$((p1 - p0)),$((t1 - t0)),$(((tt1 - tt0) / 1000000)),$((${b1:-0} - ${b0:-0})),$burstf,$qend,$(cut -d' ' -f1 /proc/loadavg)"
	done
done | tee "$tmp/rounds.csv"
echo
echo "median per mode: mode,p50_ms,p99_ms,nr_throttled,throttled_ms"
for mode in $modes; do
	med() { grep "^$mode," "$tmp/rounds.csv" | cut -d, -f"$1" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
	echo "$mode,$(med 4),$(med 5),$(med 8),$(med 9)"
done
config none
agent --once >/dev/null 2>&1 || true
