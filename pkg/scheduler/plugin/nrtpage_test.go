package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// item is a report as a list's item: its JSON with a resource version.
func item(t testing.TB, o *nrt.Object, version string) string {
	t.Helper()
	u := toUnstructured(t, o)
	u.SetResourceVersion(version)
	raw, err := u.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// page is a list's JSON as the API server writes it, with these items.
func page(items ...string) string {
	return `{"apiVersion":"topology.node.k8s.io/v1alpha2","kind":"NodeResourceTopologyList",` +
		`"metadata":{"resourceVersion":"70","continue":"next","remainingItemCount":4},"items":[` +
		strings.Join(items, ",") + `]}`
}

func entries(t *testing.T, list []runtime.RawExtension) map[string]*nrtEntry {
	t.Helper()
	out := map[string]*nrtEntry{}
	for _, it := range list {
		e := it.Object.(*nrtEntry)
		out[e.name] = e
	}
	return out
}

// decodeOne is a report read as the only item of a page.
func decodeOne(t *testing.T, o *nrt.Object, texts texts) *received {
	t.Helper()
	list, _, err := decodePage(strings.NewReader(page(item(t, o, "1"))), texts, nil)
	if err != nil || len(list) != 1 {
		t.Fatalf("a page of one report: %d entries, %v", len(list), err)
	}
	return list[0].Object.(*nrtEntry).take()
}

// A page gives an entry per named report, at its version, holding the
// report decoded as it was sent, or, for a report that cannot be read, the
// error naming it, without refusing the others; and the list's version and
// continuation.
func TestDecodePage(t *testing.T) {
	a, b := report(t, "a", nil), report(t, "b", nil)
	unreadable := `{"metadata":{"name":"c","resourceVersion":"13"},"zones":"not a list"}`
	nameless := `{"metadata":{},"zones":[]}`
	huge := `{"metadata":{"name":"d","resourceVersion":"14","annotations":{"x":"` + strings.Repeat("x", maxReportBytes) + `"}}}`
	list, meta, err := decodePage(strings.NewReader(page(item(t, a, "11"), unreadable, nameless, item(t, b, "12"), huge)), texts{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if meta.ResourceVersion != "70" || meta.Continue != "next" || meta.RemainingItemCount == nil || *meta.RemainingItemCount != 4 {
		t.Errorf("the list's metadata: %+v", meta)
	}
	got := entries(t, list)
	if len(list) != 4 || len(got) != 4 {
		t.Fatalf("%d entries %v, want a, b, c and d (the nameless item has none)", len(list), got)
	}
	for name, want := range map[string]*nrt.Object{"a": a, "b": b} {
		r := got[name].take()
		if r == nil || r.err != nil || r.o == nil {
			t.Fatalf("%s: %+v, want the report", name, r)
		}
		have, _ := json.Marshal(r.o)
		sent, _ := json.Marshal(want)
		if !bytes.Equal(have, sent) {
			t.Errorf("%s: decoded as\n%s\nwant\n%s", name, have, sent)
		}
	}
	if v := got["a"].version + got["b"].version + got["c"].version + got["d"].version; v != "11121314" {
		t.Errorf("versions %q, want each report's own", v)
	}
	for name, field := range map[string]string{"c": "zones", "d": "bytes"} {
		r := got[name].take()
		if r.o != nil || r.err == nil || !strings.Contains(r.err.Error(), `"`+name+`"`) || !strings.Contains(r.err.Error(), field) {
			t.Errorf("%s: %+v, want an error naming it and %s", name, r, field)
		}
	}
}

// The list's fields in any order, and null items, read as the same list.
func TestDecodePageInAnyOrder(t *testing.T) {
	it := item(t, report(t, "a", nil), "5")
	for _, text := range []string{
		`{"items":[` + it + `],"kind":"NodeResourceTopologyList","metadata":{"resourceVersion":"9"}}`,
		` {"metadata":{"resourceVersion":"9"},"items":[` + it + `]} `,
	} {
		list, meta, err := decodePage(strings.NewReader(text), texts{}, nil)
		if err != nil || meta.ResourceVersion != "9" || len(list) != 1 || list[0].Object.(*nrtEntry).version != "5" {
			t.Errorf("%.60s...: %d entries, %+v, %v", text, len(list), meta, err)
		}
	}
	list, meta, err := decodePage(strings.NewReader(`{"metadata":{"resourceVersion":"3"},"items":null}`), texts{}, nil)
	if err != nil || len(list) != 0 || meta.ResourceVersion != "3" {
		t.Errorf("items null: %d entries, %+v, %v", len(list), meta, err)
	}
}

// What is not a list's JSON is an error, naming what was wrong.
func TestDecodePageNotAList(t *testing.T) {
	for text, want := range map[string]string{
		``:                             "the text ends",
		`[]`:                           "want {",
		`{"items":{}}`:                 "want an array",
		`{"items":[{"metadata":{}}`:    "want ], the text ends",
		`{"items":[]} {}`:              "data after the list",
		`{"metadata":"x","items":[]}`:  "metadata",
		`{"items":[{"metadata":{]}]}`:  "invalid character",
		`{"metadata":{}, "items":[],}`: "invalid character",
	} {
		_, _, err := decodePage(strings.NewReader(text), texts{}, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", text, err, want)
		}
	}
}

// Reports of the same machine in a page hold their CPU topology text once.
func TestDecodePageSharesTexts(t *testing.T) {
	list, _, err := decodePage(strings.NewReader(page(item(t, report(t, "a", nil), "1"), item(t, report(t, "b", nil), "2"))), texts{}, nil)
	if err != nil || len(list) != 2 {
		t.Fatal(len(list), err)
	}
	text := func(i int) string {
		return list[i].Object.(*nrtEntry).take().o.Metadata.Annotations[nrt.AnnotationCPUTopology]
	}
	a, b := text(0), text(1)
	if len(a) < minSharedText || a != b || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("the two reports' topology texts: %d bytes, equal %v, one copy %v", len(a), a == b, unsafe.StringData(a) == unsafe.StringData(b))
	}
}

// Whatever the text, decodePage returns without panicking, an entry for at
// most each item, each holding a report or an error, never both; a report
// it returns is within the bounds.
func FuzzDecodePage(f *testing.F) {
	f.Add(page(item(f, report(f, "a", nil), "1"), `{"metadata":{"name":"c"},"zones":7}`))
	f.Add(`{"items":null}`)
	f.Add(`{"items":[{"metadata":{"name":"x","annotations":{"k":"v"}},"zones":[{"name":"node-0","resources":[{"name":"cpu","capacity":"1e3"}]}]}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		list, _, _ := decodePage(strings.NewReader(text), texts{}, nil)
		if len(list) > strings.Count(text, "{") {
			t.Fatalf("%d entries from %d objects", len(list), strings.Count(text, "{"))
		}
		for _, it := range list {
			e := it.Object.(*nrtEntry)
			r := e.take()
			if e.name == "" || r == nil || (r.o == nil) == (r.err == nil) {
				t.Fatalf("entry %q: %+v", e.name, r)
			}
			if r.o != nil {
				if err := checkReport(e.name, r.o); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkReportPage is one page of the list at the scale run's machine
// (500 reports of 192 CPUs, nothing held), read as the dynamic client did
// (the page into nested maps, each item then converted) and as the stream
// is (decodePage). B/op is what the page costs to read.
func BenchmarkReportPage(b *testing.B) {
	o, err := nrt.Build(nrt.Input{Node: "n", Topology: fixture.MustBuild(fixture.Intel2S96C),
		Reserved: cpuset.New(0, fixture.Intel2S96C.TotalCores())})
	if err != nil {
		b.Fatal(err)
	}
	var items []string
	for i := range reportPageSize {
		o.Metadata.Name = fmt.Sprintf("n%d", i)
		items = append(items, item(b, o, "1"))
	}
	text := []byte(page(items...))
	b.Logf("a page is %d bytes of JSON", len(text))
	b.Run("nested-maps", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var list unstructured.UnstructuredList
			if err := list.UnmarshalJSON(text); err != nil {
				b.Fatal(err)
			}
			for i := range list.Items {
				if _, err := decodeReport(&list.Items[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("stream", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := decodePage(bytes.NewReader(text), texts{}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
