package plugin

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
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
// fetches the reports in pages and decodes each page's items into
// nrt.Object as the page arrives, so that the nested maps of one page, not
// of every report, are alive at once; the dynamic informer decoded the list
// whole into nested maps, which the store kept until the handler ran after
// the last report was listed (at 5000 nodes, most of the scheduler's peak
// memory). The watch is the dynamic client's: one object per event.
func reportInformer(client dynamic.NamespaceableResourceInterface, pageSize int64) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
			list, _, err := listPages(ctx, client, pageSize)
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.Watch(ctx, opts)
		},
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
func listPages(ctx context.Context, client dynamic.ResourceInterface, pageSize int64) (*metav1.List, int, error) {
	out := &metav1.List{}
	texts := texts{}
	opts := metav1.ListOptions{Limit: pageSize}
	for requests := 1; ; requests++ {
		page, err := client.List(ctx, opts)
		if err != nil {
			return nil, requests, err
		}
		if requests == 1 {
			out.ResourceVersion = page.GetResourceVersion()
			if n := page.GetRemainingItemCount(); n != nil && *n > 0 {
				out.Items = make([]runtime.RawExtension, 0, int64(len(page.Items))+min(*n, 1<<20))
			}
		}
		for i := range page.Items {
			out.Items = append(out.Items, runtime.RawExtension{Object: entryOf(&page.Items[i], texts)})
			// The page's nested maps go as soon as each item is read.
			page.Items[i] = unstructured.Unstructured{}
		}
		opts.Continue = page.GetContinue()
		if opts.Continue == "" {
			return out, requests, nil
		}
	}
}

// entryOf is the entry the store keeps of a listed report, the report
// decoded, its long annotations kept once for all the reports that carry
// the same text (texts).
func entryOf(u *unstructured.Unstructured, texts texts) *nrtEntry {
	e := &nrtEntry{name: u.GetName(), version: u.GetResourceVersion()}
	o, err := decodeReport(u)
	if o != nil {
		texts.share(o.Metadata.Annotations)
	}
	e.raw.Store(&received{o: o, err: err})
	return e
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

// decodeReport reads a report's nested maps into nrt.Object, refusing
// one beyond the bounds above. The converter, not a JSON round trip: a
// tenth of the cost, which shows when a scheduler starts on a thousand
// reports.
func decodeReport(u *unstructured.Unstructured) (*nrt.Object, error) {
	var o nrt.Object
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &o); err != nil {
		return nil, err
	}
	if n := len(o.Zones); n > maxReportZones {
		return nil, fmt.Errorf("NodeResourceTopology %q: zones: %d, at most %d", u.GetName(), n, maxReportZones)
	}
	size := 0
	for k, v := range o.Metadata.Annotations {
		size += len(k) + len(v)
	}
	if size > maxReportAnnotationBytes {
		return nil, fmt.Errorf("NodeResourceTopology %q: metadata.annotations: %d bytes, at most %d", u.GetName(), size, maxReportAnnotationBytes)
	}
	return &o, nil
}
