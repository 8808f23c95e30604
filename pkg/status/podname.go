package status

import "strings"

// PodOf splits a workload name into the namespace and name of its pod: pods
// are named "namespace/name", and host workloads' names hold no slash (the
// host config refuses one), so a name without a slash is no pod's and gives
// two empty strings. Metrics label pod series with these, the labels
// kube-state-metrics uses, so that they join with kube_pod_*.
func PodOf(name string) (namespace, pod string) {
	ns, pod, ok := strings.Cut(name, "/")
	if !ok {
		return "", ""
	}
	return ns, pod
}
