package plugin

import (
	"encoding/json"
	"fmt"
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
	b.Run("handler", func(b *testing.B) {
		b.ReportAllocs()
		p := &Plugin{cluster: core.NewCluster()}
		i := 0
		for b.Loop() {
			u := decode()
			u.SetName(fmt.Sprintf("n%d", i))
			e, _ := slimmer{}.slim(u)
			p.onNRT(klog.Background(), e)
			i++
		}
	})
}
