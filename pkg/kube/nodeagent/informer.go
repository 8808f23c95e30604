package nodeagent

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"

	"github.com/locus-project/locus/pkg/kube/kubeclient"
)

// podInformer caches the pods bound to node, and only those: the field
// selector keeps the rest of the cluster out of the agent's memory and off
// the wire.
func podInformer(client kubeclient.Interface, node string, resync time.Duration) cache.SharedIndexInformer {
	sel := fields.OneTermEqualSelector("spec.nodeName", node).String()
	lw := kubeclient.ListWatch(client, kubeclient.Pods, metav1.NamespaceAll, sel)
	inf := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, resync, cache.Indexers{})
	// Stored pods keep only what the agent reads (slimPod).
	_ = inf.SetTransform(func(obj any) (any, error) {
		if pod, ok := obj.(*corev1.Pod); ok {
			slimPod(pod)
		}
		return obj, nil
	})
	return inf
}

// nodeInformer caches the agent's own Node, whose labels select the
// nodeStrategies entry of resource-qos-config in force.
func nodeInformer(client kubeclient.Interface, node string) cache.SharedIndexInformer {
	sel := fields.OneTermEqualSelector("metadata.name", node).String()
	lw := kubeclient.ListWatch(client, kubeclient.Nodes, "", sel)
	inf := cache.NewSharedIndexInformer(lw, &corev1.Node{}, 0, cache.Indexers{})
	// Only the labels are read: the status (images, conditions) is large
	// and changes every few seconds.
	_ = inf.SetTransform(func(obj any) (any, error) {
		if n, ok := obj.(*corev1.Node); ok {
			return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion, Labels: n.Labels}}, nil
		}
		return obj, nil
	})
	return inf
}

// nodeLabels are the labels of the cached Node, nil while it is unknown.
func nodeLabels(inf cache.SharedIndexInformer, node string) map[string]string {
	obj, ok, err := inf.GetStore().GetByKey(node)
	if err != nil || !ok {
		return nil
	}
	if n, ok := obj.(*corev1.Node); ok {
		return n.Labels
	}
	return nil
}
