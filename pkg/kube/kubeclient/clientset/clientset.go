// Package clientset answers kubeclient.Interface from a client-go
// clientset: for the scheduler, which links the clientset anyway, and for
// tests, whose fake clientset stands in for an API server. The agent never
// imports it (a test of cmd/locus checks), as the clientset is what
// kubeclient keeps out of the agent.
package clientset

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/locus-project/locus/pkg/kube/kubeclient"
)

// Wrap answers kubeclient.Interface from cs.
func Wrap(cs kubernetes.Interface) kubeclient.Interface { return wrapped{cs} }

type wrapped struct{ cs kubernetes.Interface }

func (w wrapped) Resource(k kubeclient.Kind, ns string) kubeclient.Resource {
	switch k {
	case kubeclient.Pods:
		return of(w.cs.CoreV1().Pods(ns))
	case kubeclient.Nodes:
		return of(w.cs.CoreV1().Nodes())
	case kubeclient.ConfigMaps:
		return of(w.cs.CoreV1().ConfigMaps(ns))
	case kubeclient.DaemonSets:
		return of(w.cs.AppsV1().DaemonSets(ns))
	case kubeclient.ResourceSlices:
		return of(w.cs.ResourceV1beta1().ResourceSlices())
	case kubeclient.ResourceClaims:
		return of(w.cs.ResourceV1beta1().ResourceClaims(ns))
	}
	panic(fmt.Sprintf("clientset: unknown kind %d", k))
}

func (w wrapped) Events() record.EventSink {
	return &typedcorev1.EventSinkImpl{Interface: w.cs.CoreV1().Events("")}
}

func (w wrapped) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	return w.cs.Discovery().ServerResourcesForGroupVersion(gv)
}

// typedClient is a generated client of one kind, T its object and L its list.
type typedClient[T, L runtime.Object] interface {
	List(ctx context.Context, o metav1.ListOptions) (L, error)
	Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error)
	Get(ctx context.Context, name string, o metav1.GetOptions) (T, error)
	Delete(ctx context.Context, name string, o metav1.DeleteOptions) error
}

func of[T, L runtime.Object](c typedClient[T, L]) kubeclient.Resource { return typed[T, L]{c} }

// typed hides a generated client's types behind runtime.Object, and gives
// no object but a nil one with an error (a typed nil is not nil).
type typed[T, L runtime.Object] struct{ c typedClient[T, L] }

func (t typed[T, L]) List(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	l, err := t.c.List(ctx, o)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (t typed[T, L]) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return t.c.Watch(ctx, o)
}

func (t typed[T, L]) Get(ctx context.Context, name string) (runtime.Object, error) {
	obj, err := t.c.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return obj, nil
}

func (t typed[T, L]) Delete(ctx context.Context, name string, o metav1.DeleteOptions) error {
	return t.c.Delete(ctx, name, o)
}
