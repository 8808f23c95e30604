package plugin

import (
	"context"
	"fmt"
	"io"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/locus-project/locus/pkg/kube/nrt"
)

// Reports is how the plugin reads NodeResourceTopology objects: a page of
// the list as the API server's JSON, for decodePage to read one report at
// a time, and the watch.
type Reports interface {
	// ListPage returns one page of the newest list (opts' limit and
	// continue; listPages sets no version); the caller closes it.
	ListPage(ctx context.Context, opts metav1.ListOptions) (io.ReadCloser, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// NewReports reads the reports through this configuration: the list as a
// stream of JSON, the watch through a dynamic client, over one HTTP client.
//
// The dynamic client's list decoded a whole page (500 reports, about 12 MB
// of JSON at 192 CPUs) into nested maps, about 50 MB, then those into
// nrt.Object; the page, its maps and its objects were alive together, and
// at 5000 nodes that was most of the scheduler's peak memory. A page read
// from the stream is decoded straight into nrt.Object, one report at a time.
func NewReports(cfg *rest.Config) (Reports, error) {
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.APIPath = "/apis"
	c.GroupVersion = &schema.GroupVersion{Group: nrt.GVR.Group, Version: nrt.GVR.Version}
	// A custom resource is served as JSON only, whatever the scheduler's
	// own clients ask for.
	c.ContentType = "application/json"
	c.AcceptContentTypes = "application/json"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	list, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	return &restReports{list: list, watch: dyn.Resource(nrt.GVR)}, nil
}

type restReports struct {
	list  *rest.RESTClient
	watch dynamic.ResourceInterface
}

func (r *restReports) ListPage(ctx context.Context, opts metav1.ListOptions) (io.ReadCloser, error) {
	req := r.list.Get().Resource(nrt.GVR.Resource)
	if opts.Limit > 0 {
		req = req.Param("limit", strconv.FormatInt(opts.Limit, 10))
	}
	if opts.Continue != "" {
		req = req.Param("continue", opts.Continue)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", nrt.GVR.Resource, err)
	}
	return body, nil
}

func (r *restReports) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return r.watch.Watch(ctx, opts)
}
