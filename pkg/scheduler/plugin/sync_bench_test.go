package plugin

import (
	"encoding/json"
	"fmt"
	goruntime "runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/scheduler/core"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// BenchmarkReportSync is what the plugin's start costs per node: one
// NodeResourceTopology of the scale run's machine (192 CPUs, its first
// core reserved, nothing held) as the API server sends it, decoded as the
// dynamic informer decodes it (JSON into nested maps), then read into the
// cluster state (the handler: the converter into nrt.Object, then
// SetNRT), each report under a name of its own. At 5000 nodes the sync
// is 5000 of these.
func BenchmarkReportSync(b *testing.B) {
	o, err := nrt.Build(nrt.Input{Node: "n", Topology: fixture.MustBuild(fixture.Intel2S96C),
		Reserved: cpuset.New(0, fixture.Intel2S96C.TotalCores())})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := json.Marshal(o)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("a report is %d bytes of JSON", len(raw))
	decode := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			b.Fatal(err)
		}
		return u
	}
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decode()
		}
	})
	b.Run("convert", func(b *testing.B) {
		b.ReportAllocs()
		u := decode()
		for b.Loop() {
			var o nrt.Object
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &o); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SetNRT", func(b *testing.B) {
		b.ReportAllocs()
		c := core.NewCluster()
		i := 0
		for b.Loop() {
			c.SetNRT(fmt.Sprintf("n%d", i), o)
			i++
		}
	})
	// What the informer holds of a report between the list and the handler,
	// for a page of reports: nested maps as the dynamic informer kept them,
	// against the entry the paged list keeps (the report decoded). Reported
	// as live heap per report after a collection.
	const page = 500
	retained := func(b *testing.B, keep func() any) {
		var kept []any
		for b.Loop() {
			kept = nil // the last page's reports go before the count starts
			goruntime.GC()
			var before, after goruntime.MemStats
			goruntime.ReadMemStats(&before)
			for range page {
				kept = append(kept, keep())
			}
			goruntime.GC()
			goruntime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/page, "live-B/report")
		}
		goruntime.KeepAlive(kept)
	}
	b.Run("listed/nested-maps", func(b *testing.B) { retained(b, func() any { return decode() }) })
	b.Run("listed/decoded", func(b *testing.B) {
		shared := texts{}
		retained(b, func() any { return listed(b, raw).entry(shared) })
	})
	// handled: a report of its own name each time, made into the entry
	// the store keeps (entry), then read by the handler.
	handled := func(b *testing.B, entry func(name string) any) {
		b.ReportAllocs()
		p := &Plugin{cluster: core.NewCluster()}
		i := 0
		for b.Loop() {
			p.onNRT(klog.Background(), entry(fmt.Sprintf("n%d", i)))
			i++
		}
	}
	// The watched path: the transform's entry.
	b.Run("handler", func(b *testing.B) {
		handled(b, func(name string) any {
			u := decode()
			u.SetName(name)
			e, _ := slimmer{}.slim(u)
			return e
		})
	})
	// The listed path: the page's item decoded into an entry.
	b.Run("listed+handler", func(b *testing.B) {
		handled(b, func(name string) any {
			l := listed(b, raw)
			l.name, l.o.Metadata.Name = name, name
			return l.entry(texts{})
		})
	})
}

// listed is a report's JSON read as an item of a page.
func listed(b *testing.B, raw []byte) *listedReport {
	var l listedReport
	if err := json.Unmarshal(raw, &l); err != nil || l.err != nil {
		b.Fatal(err, l.err)
	}
	return &l
}
