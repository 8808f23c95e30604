#!/usr/bin/env bash
# The Kubernetes-mode agent under load: 300 pods on one 192-CPU fixture node
# (a real kube-apiserver and etcd, a fake kubelet writing cgroups on /dev/shm),
# churned in 12 waves of 30 deletions and 30 creations, 5 s apart. Prints the
# LOAD summary line: reconcile duration (the agent's histogram), end-to-end
# CPU binding latency, the test process's RSS and Go heap, and its CPU time.
# The reconcile's duration is given twice: from the agent's histogram
# (power-of-two buckets) and exactly, from the agent's "reconciled" log line.
# LOCUS_LOAD_CPUPROFILE=/abs/file.prof also writes a CPU profile of the churn;
# LOCUS_LOAD_TRACE=/abs/file.log the agent's events and every reconcile's
# duration and count of writes, in order.
# LOCUS_LOAD_RUN='^TestLoadAgentProcess$' runs the same churn with the agent as
# its own process (the locus binary, LOCUS_LOAD_AGENT or built from cmd/locus),
# whose RSS (RssAnon, RssFile) and CPU are then the agent's alone;
# LOCUS_LOAD_HEAPPROFILE=/abs/file.prof saves its heap profile at the end, and
# LOCUS_LOAD_AGENT_ENV="GOGC=50 ..." adds to its environment.
# The control-plane binaries come from hack/build-controlplane.sh.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
"$repo/hack/build-controlplane.sh" >/dev/null
LOCUS_LOAD=1 "${GO:-go}" test -count=1 -timeout 10m -run "${LOCUS_LOAD_RUN:-^TestLoad\$}" -v ./pkg/kube/nodeagent/
