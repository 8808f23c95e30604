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
	// The agent reads a pod's metadata, spec and status; managed fields are
	// large and never read.
	_ = inf.SetTransform(func(obj any) (any, error) {
		if pod, ok := obj.(*corev1.Pod); ok {
			pod.ManagedFields = nil
		}
		return obj, nil
	})
	return inf
}
