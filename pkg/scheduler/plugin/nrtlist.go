package plugin

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/locus-project/locus/pkg/kube/nrt"
)

// reportPageSize is how many reports one list request asks for: at 5000
// nodes, reports of about 24 KB, a page is about 12 MB of JSON instead of
// 120 MB for the whole list.
const reportPageSize = 500

// Bounds on one report, beyond which it is refused (the node is then as
// one without a report). A report of a 192-CPU machine has 2 zones and
// about 20 KB of annotations.
const (
	maxReportZones           = 1024
	maxReportAnnotationBytes = 1 << 20
)

// reportInformer is the plugin's NodeResourceTopology informer. Its list
// fetches the reports in pages and decodes each page into nrt.Object one
// report at a time as the page arrives (decodePage); the dynamic informer
// decoded the list whole into nested maps, which the store kept until the
// handler ran after the last report was listed (at 5000 nodes, most of the
// scheduler's peak memory). The watch is the dynamic client's: one object
// per event.
func reportInformer(reports Reports, pageSize int64) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
			list, _, err := listPages(ctx, reports, pageSize)
			return list, err
		},
		WatchFuncWithContext: reports.Watch,
	}
	return cache.NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{}, cache.SharedIndexInformerOptions{
		Indexers:          cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		ObjectDescription: nrt.GVR.String(),
	})
}

// listPages lists every report in pages of pageSize, each item decoded
// into an nrtEntry that holds the nrt.Object (or the error that decoding
// it met), and returns them as one list at the resource version of the
// first page (a list's continuation is a view of that version), with the
// number of requests made.
//
// The list options the reflector passes are not used: it asks for
// resourceVersion "0" (any version, from the API server's watch cache),
// which that cache serves whole, whatever the limit. A list at "" (the
// newest version) is served in pages, and is never older than any version
// the reflector asks a relist for.
func listPages(ctx context.Context, reports Reports, pageSize int64) (*metav1.List, int, error) {
	out := &metav1.List{}
	texts := texts{}
	opts := metav1.ListOptions{Limit: pageSize}
	for requests := 1; ; requests++ {
		meta, err := listPage(ctx, reports, opts, texts, out)
		if err != nil {
			return nil, requests, err
		}
		if requests == 1 {
			out.ResourceVersion = meta.ResourceVersion
			if n := meta.RemainingItemCount; n != nil && *n > 0 {
				out.Items = slices.Grow(out.Items, int(min(*n, 1<<20)))
			}
		}
		opts.Continue = meta.Continue
		if opts.Continue == "" {
			return out, requests, nil
		}
	}
}

// listPage reads one page into out.
func listPage(ctx context.Context, reports Reports, opts metav1.ListOptions, texts texts, out *metav1.List) (pageMeta, error) {
	body, err := reports.ListPage(ctx, opts)
	if err != nil {
		return pageMeta{}, err
	}
	defer body.Close()
	var meta pageMeta
	out.Items, meta, err = decodePage(body, texts, out.Items)
	return meta, err
}

// texts holds one copy of each long annotation text seen in a list. The
// CPU topology annotation is most of a report (about 10 KB of its 13 KB
// decoded, at 192 CPUs) and the same on every node of a kind that holds
// nothing, as at a cluster's start: 5000 reports until the handler runs
// held 5000 copies.
type texts map[string]string

// minSharedText: shorter texts (the heartbeat's time) differ per node.
const minSharedText = 256

func (t texts) share(annotations map[string]string) {
	for k, v := range annotations {
		if len(v) < minSharedText {
			continue
		}
		if kept, ok := t[v]; ok {
			annotations[k] = kept
		} else {
			t[v] = v
		}
	}
}

// decodeReport reads a report's nested maps (from a watch event) into
// nrt.Object, refusing one beyond the bounds of checkReport. The
// converter, not a JSON round trip: a tenth of the cost.
func decodeReport(u *unstructured.Unstructured) (*nrt.Object, error) {
	var o nrt.Object
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &o); err != nil {
		return nil, err
	}
	if err := checkReport(u.GetName(), &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// checkReport refuses a report beyond the bounds above.
func checkReport(name string, o *nrt.Object) error {
	if n := len(o.Zones); n > maxReportZones {
		return fmt.Errorf("NodeResourceTopology %q: zones: %d, at most %d", name, n, maxReportZones)
	}
	size := 0
	for k, v := range o.Metadata.Annotations {
		size += len(k) + len(v)
	}
	if size > maxReportAnnotationBytes {
		return fmt.Errorf("NodeResourceTopology %q: metadata.annotations: %d bytes, at most %d", name, size, maxReportAnnotationBytes)
	}
	return nil
}
