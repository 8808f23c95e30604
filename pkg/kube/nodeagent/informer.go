package nodeagent

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// podInformer caches the pods bound to node, and only those: the field
// selector keeps the rest of the cluster out of the agent's memory and off
// the wire.
func podInformer(client kubernetes.Interface, node string, resync time.Duration) cache.SharedIndexInformer {
	sel := fields.OneTermEqualSelector("spec.nodeName", node).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return client.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
		},
	}
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
func nodeInformer(client kubernetes.Interface, node string) cache.SharedIndexInformer {
	sel := fields.OneTermEqualSelector("metadata.name", node).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return client.CoreV1().Nodes().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return client.CoreV1().Nodes().Watch(ctx, o)
		},
	}
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
