package plugin

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// dropManagedFields is the transform kube-scheduler means its pod informer
// to have (newPodInformer's trim, since 1.29) and does not in 1.33: the
// informer factory sets its own transform, nil, over the one newPodInformer
// set (InformerFor). Nothing in the scheduler reads managed fields, and
// nothing writes a pod or a node back from the cache (the framework patches
// a pod's status from a diff, the plugin merge-patches its annotation), so
// they are dropped from nodes too. Each writer of an object leaves an entry
// of its own, with the fields it set as JSON: the creator's, the kubelet's
// (or kwok's) status, the scheduler's condition and the plugin's decision:
// about 1 KB a bound pod, 5 MiB of a scheduler's 44 at 1000 nodes and 5000
// pods (docs/benchmarks.md). Idempotent, as an informer's transform must be.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// trimInformers sets dropManagedFields on the framework's pod and node
// informers, before they start (the framework builds its plugins first).
// An informer someone started earlier refuses a transform and keeps the
// fields: that costs memory and changes no decision, so it is only logged.
func trimInformers(logger klog.Logger, informers ...cache.SharedIndexInformer) {
	for _, inf := range informers {
		if err := inf.SetTransform(dropManagedFields); err != nil {
			logger.V(2).Info("managed fields kept in an informer's cache", "plugin", Name, "err", err)
		}
	}
}
