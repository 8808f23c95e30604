package plugin

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// nrtEntry is what the plugin's NodeResourceTopology informer keeps of an
// object: its name and version, and the object as it came from the API
// server only until the plugin's handler has read it. The cluster model
// holds what the plugin needs of a report (its machine, shared by every
// node of the same kind, and the holdings); the informer's store held every
// report whole besides, as nested maps, about 28 KB for a node of 192 CPUs,
// which no one read again: the handler ignores the old object of an update,
// and a deletion needs only the name. An entry with a whole ObjectMeta was
// still about 420 bytes with its strings, 2 MB at 5000 nodes; the informer
// reads only the name (its key) and the version (whether an update changed
// anything), so the rest of the metadata is answered empty (entryMeta).
type nrtEntry struct {
	entryMeta
	name, version string
	// raw is the object received, handed to the handler once (take).
	raw atomic.Pointer[unstructured.Unstructured]
}

func (e *nrtEntry) GetName() string            { return e.name }
func (e *nrtEntry) SetName(n string)           { e.name = n }
func (e *nrtEntry) GetResourceVersion() string { return e.version }
func (e *nrtEntry) SetResourceVersion(v string) {
	e.version = v
}

// GetObjectKind: an entry carries no kind; the informer never asks.
func (e *nrtEntry) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// slimmer is the informer's transform: it wraps each object received in
// an nrtEntry. It does not decode (a transform runs under the informer's
// queue lock); the handler does. An entry passed again is kept as it is,
// as a transform must be idempotent.
//
// An object at the version the store already holds (a relist after the
// watch broke, where nothing changed) gets an entry without the object:
// the informer tells no handler of an update that keeps the version, so
// the object would never be taken, and the store would keep every report
// whole again until its next change.
type slimmer struct {
	store func() cache.Store // the informer's, nil before it runs
}

func (s slimmer) slim(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	e := &nrtEntry{name: u.GetName(), version: u.GetResourceVersion()}
	if s.store != nil && e.version != "" {
		if st := s.store(); st != nil {
			if old, ok, _ := st.GetByKey(e.name); ok && old.(*nrtEntry).version == e.version {
				return e, nil
			}
		}
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
	c := &nrtEntry{name: e.name, version: e.version}
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
		return o.name
	case *unstructured.Unstructured:
		return o.GetName()
	}
	return ""
}

var _ cache.TransformFunc = slimmer{}.slim
