package plugin

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/locus-project/locus/pkg/kube/nrt"
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
	raw atomic.Pointer[received]
}

// received is a report as it came: nested maps from a watch event, or
// already decoded (o, or the error that decoding it met) from a page of
// the list (listPages), which decodes each page as it arrives rather than
// holding every report as nested maps until the list ends.
type received struct {
	u   *unstructured.Unstructured
	o   *nrt.Object
	err error
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
	var e *nrtEntry
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		e = &nrtEntry{name: o.GetName(), version: o.GetResourceVersion()}
		e.raw.Store(&received{u: o})
	case *nrtEntry:
		// From a page of the list, already decoded; or passed again.
		e = o
	default:
		return obj, nil
	}
	if s.store != nil && e.version != "" && e.raw.Load() != nil {
		if st := s.store(); st != nil {
			if old, ok, _ := st.GetByKey(e.name); ok && old != any(e) && old.(*nrtEntry).version == e.version {
				e.raw.Store(nil)
			}
		}
	}
	return e, nil
}

// take hands over the object received, once: later calls (none are
// expected, the informer has this one handler) get nil.
func (e *nrtEntry) take() *received { return e.raw.Swap(nil) }

// DeepCopyObject copies the name and version, and the object received if
// not yet taken.
func (e *nrtEntry) DeepCopyObject() runtime.Object {
	c := &nrtEntry{name: e.name, version: e.version}
	if r := e.raw.Load(); r != nil {
		d := &received{err: r.err}
		if r.u != nil {
			d.u = r.u.DeepCopy()
		}
		// The decoded report is shared: no one writes to it.
		d.o = r.o
		c.raw.Store(d)
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
