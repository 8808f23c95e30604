#!/usr/bin/env bash
# The commands of docs/quickstart.md, in its order, so that a test runs each of
# them: test/e2e/quickstart_test.go checks that every command of the document is
# here and runs the steps on the end-to-end node.
#
#   docs/quickstart.sh STEP...   images, load, install, try, check, dashboard, cleanup
#
# Runs from the repository's root with kubectl, helm and ctr on PATH, KUBECONFIG
# (and CONTAINERD_ADDRESS for ctr) naming the cluster, and the values for its nodes
# in ~/locus-values.yaml.
set -euo pipefail
cd "$(dirname "$0")/.."

step_images() {
	make images PLATFORMS=linux/amd64
}

step_load() {
	ctr -n k8s.io images import _output/images/locus.oci.tar
}

step_install() {
	kubectl create namespace locus-system --dry-run=client -o yaml | kubectl apply -f -
	kubectl label namespace locus-system pod-security.kubernetes.io/enforce=privileged --overwrite
	helm install locus deploy/helm/locus --namespace locus-system -f ~/locus-values.yaml --set image.tag="$(cat _output/images/TAG)"
	kubectl -n locus-system rollout status daemonset/locus-agent --timeout=5m
}

step_try() {
	kubectl apply -f docs/quickstart-redis.yaml
	kubectl wait --for=condition=Ready pod/redis --timeout=120s
	kubectl describe pod redis
}

step_check() {
	kubectl get noderesourcetopology
	kubectl -n locus-system exec daemonset/locus-agent -- locus status
}

step_dashboard() {
	helm upgrade locus deploy/helm/locus --namespace locus-system --reuse-values --set grafana.dashboard.enabled=true
}

step_cleanup() {
	kubectl delete -f docs/quickstart-redis.yaml
	helm uninstall locus --namespace locus-system
}

[ $# -gt 0 ] || {
	sed -n '6p' "$0" >&2
	exit 2
}
for s in "$@"; do
	case "$s" in
	images | load | install | try | check | dashboard | cleanup) "step_$s" ;;
	*)
		echo "quickstart: no step $s" >&2
		exit 2
		;;
	esac
done
