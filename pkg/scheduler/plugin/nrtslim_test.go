package plugin

import (
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/locus-project/locus/pkg/kube/nrt"
)

// The NodeResourceTopology informer's store keeps a name and a version per
// report, never the report, once the plugin has read it: added at the
// start, updated and deleted later. The cluster has the reports all the
// same (Filter passes where there is one, refuses where it went).
func TestReportsNotKeptWhole(t *testing.T) {
	e := newEnv(t, nil, []*nrt.Object{report(t, "a", nil), report(t, "b", nil)})
	slim := func(when string, want int) {
		t.Helper()
		waitFor(t, "the reports' handler", func() bool {
			for _, obj := range e.pl.reports.List() {
				if en, ok := obj.(*nrtEntry); !ok || en.raw.Load() != nil {
					return false
				}
			}
			return len(e.pl.reports.List()) == want
		})
		for _, obj := range e.pl.reports.List() {
			en, ok := obj.(*nrtEntry)
			if !ok {
				t.Fatalf("%s: the store holds a %T, want *nrtEntry", when, obj)
			}
			// The fake client sets no versions; the API server's are
			// checked in TestSlimNRT.
			if en.name == "" {
				t.Errorf("%s: entry without a name: %+v", when, en)
			}
		}
	}
	slim("at the start", 2)
	if _, got := e.cycle(pod("p", nil), node("a", "16"), node("b", "16")); !got["a"].IsSuccess() || !got["b"].IsSuccess() {
		t.Fatalf("at the start: %v", got)
	}

	u := toUnstructured(t, report(t, "a", nil))
	u.SetAnnotations(map[string]string{nrt.AnnotationCPUTopology: "not json"})
	if _, err := e.dyn.Resource(nrt.GVR).Update(e.ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the unreadable report to refuse node a", func() bool {
		_, got := e.cycle(pod("p", nil), node("a", "16"))
		return !got["a"].IsSuccess()
	})
	slim("after an update", 2)

	if err := e.dyn.Resource(nrt.GVR).Delete(e.ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node b without its report", func() bool {
		_, got := e.cycle(pod("p", nil), node("b", "16"))
		return !got["b"].IsSuccess()
	})
	slim("after a deletion", 1)
}

// The transform is idempotent, hands the object over once, and names
// entries, whole objects and tombstones alike.
func TestSlimNRT(t *testing.T) {
	u := toUnstructured(t, report(t, "a", nil))
	u.SetResourceVersion("7")
	out, err := slimmer{}.slim(u)
	if err != nil {
		t.Fatal(err)
	}
	en, ok := out.(*nrtEntry)
	if !ok || en.name != "a" || en.version != "7" {
		t.Fatalf("slim = %#v", out)
	}
	if again, _ := (slimmer{}).slim(en); again != en {
		t.Errorf("slim of an entry = %#v, want the entry itself", again)
	}
	if c := en.DeepCopyObject().(*nrtEntry); c.raw.Load() == nil || c.raw.Load().u == nil || c.raw.Load().u == u || c.name != "a" {
		t.Errorf("a copy before the take must carry a copy of the object: %#v", c)
	}
	if got := en.take(); got == nil || got.u != u {
		t.Errorf("take = %v, want the object received %p", got, u)
	}
	if got := en.take(); got != nil {
		t.Errorf("a second take = %v, want nil", got)
	}
	for _, obj := range []any{en, u, cache.DeletedFinalStateUnknown{Key: "a", Obj: en}} {
		if got := nrtName(obj); got != "a" {
			t.Errorf("nrtName(%T) = %q, want a", obj, got)
		}
	}
	if got := nrtName("x"); got != "" {
		t.Errorf("nrtName of a string = %q", got)
	}
}

// An entry is its name, its version and a pointer, and the informer's
// store reads its key and namespace from it as from an object's metadata.
func TestEntrySmall(t *testing.T) {
	if size := unsafe.Sizeof(nrtEntry{}); size > 48 {
		t.Fatalf("an entry takes %d bytes, want at most 48 (it was 280 with a whole ObjectMeta)", size)
	}
	st := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	out, err := slimmer{}.slim(toUnstructured(t, report(t, "a", nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Add(out); err != nil {
		t.Fatal(err)
	}
	if keys := st.ListKeys(); len(keys) != 1 || keys[0] != "a" {
		t.Fatalf("the store's keys = %v, want [a]", keys)
	}
}

// A relist that finds a report at the version the store holds (the watch
// broke, nothing changed) keeps no copy of it: the informer tells no
// handler of such an update, so nothing would ever take it. A new version
// is handed over.
func TestRelistKeepsNoReport(t *testing.T) {
	st := cache.NewStore(cache.DeletionHandlingMetaNamespaceKeyFunc)
	s := slimmer{store: func() cache.Store { return st }}
	at := func(version string) *nrtEntry {
		t.Helper()
		u := toUnstructured(t, report(t, "a", nil))
		u.SetResourceVersion(version)
		out, err := s.slim(u)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*nrtEntry)
	}
	first := at("7")
	if first.take() == nil {
		t.Fatal("the first version of a report: nothing to take")
	}
	if err := st.Add(first); err != nil {
		t.Fatal(err)
	}
	if again := at("7"); again.raw.Load() != nil {
		t.Errorf("version 7 listed again: the entry keeps the report, which no handler will take")
	}
	if next := at("8"); next.raw.Load() == nil {
		t.Errorf("version 8 after 7: the entry has no report for the handler")
	}
}
