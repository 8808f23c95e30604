#!/usr/bin/env bash
# Checks the Helm chart deploy/helm/locus: installs a pinned helm into .cache/bin
# (Debian has no helm package; it is built from its Go module), then runs the Go test
# that lints and renders the chart and applies it to a real kube-apiserver
# (kubectl apply --dry-run=server, then helm install/upgrade/uninstall with RBAC
# checks). The control-plane binaries come from hack/build-controlplane.sh.
#
#   hack/helm-check.sh                 install helm if needed, run the chart test
#   hack/helm-check.sh --install-only  only install helm (go test ./... runs the test)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=hack/progress.sh
. "$repo/hack/progress.sh"
go=${GO:-go}
helm_version=v3.18.6 # built against k8s.io 0.33, like the control plane
helm=${LOCUS_HELM:-$repo/.cache/bin/helm}

install_only=0
case "${1:-}" in
'') ;;
--install-only) install_only=1 ;;
*)
	echo "usage: $0 [--install-only]" >&2
	exit 2
	;;
esac

if [ -x "$helm" ] && [ "$("$helm" version --template '{{.Version}}' 2>/dev/null)" = "$helm_version" ]; then
	echo "helm $helm_version present at $helm"
else
	echo "installing helm $helm_version into $(dirname "$helm") (a Go build: cold, 10 to 20 minutes on two CPUs)"
	mkdir -p "$(dirname "$helm")"
	# The same stamps as helm's own release build: its version, and the Kubernetes
	# version that .Capabilities.KubeVersion reports under helm template.
	step "helm $helm_version from its Go module" env CGO_ENABLED=0 GOBIN="$(dirname "$helm")" "$go" install -trimpath -ldflags "-s -w
		-X helm.sh/helm/v3/internal/version.version=$helm_version
		-X helm.sh/helm/v3/internal/version.gitTreeState=clean
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1
		-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=33
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1
		-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=33" \
		"helm.sh/helm/v3/cmd/helm@$helm_version"
	if [ "$(dirname "$helm")/helm" != "$helm" ]; then
		mv "$(dirname "$helm")/helm" "$helm"
	fi
	"$helm" version
fi

if [ "$install_only" = 1 ]; then
	exit 0
fi
"$repo/hack/build-controlplane.sh"
cd "$repo"
LOCUS_HELM=$helm "$go" test -count=1 -run '^TestHelmChart' ./internal/kubetest/
