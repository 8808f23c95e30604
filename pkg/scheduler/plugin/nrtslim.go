package plugin

import (
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// nrtEntry is what the plugin's NodeResourceTopology informer keeps of an
// object: its name and version, and the object as it came from the API
// server only until the plugin's handler has read it. The cluster model
// holds what the plugin needs of a report (its machine, shared by every
// node of the same kind, and the holdings); the informer's store held every
// report whole besides, as nested maps, about 28 KB for a node of 192 CPUs,
// which no one read again: the handler ignores the old object of an update,
// and a deletion needs only the name.
type nrtEntry struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	// raw is the object received, handed to the handler once (take).
	raw atomic.Pointer[unstructured.Unstructured]
}

// slimNRT is the informer's transform: it wraps each object received in an
// nrtEntry. It does not decode (a transform runs under the informer's
// queue lock); the handler does. An entry passed again is kept as it is,
// as a transform must be idempotent.
func slimNRT(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	e := &nrtEntry{
		TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(),
			UID: u.GetUID(), ResourceVersion: u.GetResourceVersion()},
	}
	e.raw.Store(u)
	return e, nil
}

// take hands over the object received, once: later calls (none are
// expected, the informer has this one handler) get nil.
func (e *nrtEntry) take() *unstructured.Unstructured { return e.raw.Swap(nil) }

// DeepCopyObject copies the name and version, and the object received if
// not yet taken.
func (e *nrtEntry) DeepCopyObject() runtime.Object {
	c := &nrtEntry{TypeMeta: e.TypeMeta}
	e.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	if u := e.raw.Load(); u != nil {
		c.raw.Store(u.DeepCopy())
	}
	return c
}

// nrtName is the name of a NodeResourceTopology the informer passes, whole,
// slimmed or as a tombstone; "" for anything else.
func nrtName(obj any) string {
	switch o := untombstone(obj).(type) {
	case *nrtEntry:
		return o.Name
	case *unstructured.Unstructured:
		return o.GetName()
	}
	return ""
}

var _ cache.TransformFunc = slimNRT
