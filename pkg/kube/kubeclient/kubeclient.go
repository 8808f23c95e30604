// Package kubeclient is the agent's client of the API server: the few
// kinds of object it reads and writes (pods, its Node, ConfigMaps, Events,
// the DRA slices and claims, and its own DaemonSet when it is uninstalled),
// over client-go's REST client with a scheme of those groups alone.
//
// client-go's clientset is not used because of what it costs at start:
// importing it registers the types of every API group (fifty-odd) in its
// scheme, which touches their code and tables and keeps them in memory. In
// a program of its own, that import alone is 11 MiB more resident file
// pages and 2 MiB more heap than REST, core/v1 and the informers; the
// agent runs on every node, where the goal is 50 MiB.
package kubeclient

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
)

// Scheme knows the kinds the agent reads and writes, and the API
// machinery's own (Status, ListOptions, APIResourceList); the event
// recorder takes it too.
var Scheme = runtime.NewScheme()

var codecs = serializer.NewCodecFactory(Scheme)

func init() {
	utilruntime.Must(corev1.AddToScheme(Scheme))
	utilruntime.Must(appsv1.AddToScheme(Scheme))
	utilruntime.Must(resourceapi.AddToScheme(Scheme))
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
}

// Kind names one kind of object the agent asks for.
type Kind int

const (
	Pods Kind = iota
	Nodes
	ConfigMaps
	DaemonSets
	ResourceSlices
	ResourceClaims
)

// kinds: each Kind's group version and resource.
var kinds = map[Kind]schema.GroupVersionResource{
	Pods:           corev1.SchemeGroupVersion.WithResource("pods"),
	Nodes:          corev1.SchemeGroupVersion.WithResource("nodes"),
	ConfigMaps:     corev1.SchemeGroupVersion.WithResource("configmaps"),
	DaemonSets:     appsv1.SchemeGroupVersion.WithResource("daemonsets"),
	ResourceSlices: resourceapi.SchemeGroupVersion.WithResource("resourceslices"),
	ResourceClaims: resourceapi.SchemeGroupVersion.WithResource("resourceclaims"),
}

func (k Kind) String() string { return kinds[k].Resource }

// Interface is what the agent asks of the API server: a *Client, or in
// tests a clientset's fake (internal/kubefake).
type Interface interface {
	// Resource is one kind's objects in namespace ns ("" for every
	// namespace, and for the kinds that have none).
	Resource(k Kind, ns string) Resource
	// Events posts Events, each to its own namespace.
	Events() record.EventSink
	// ServerResourcesForGroupVersion lists what the API server serves of
	// groupVersion (discovery).
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

// Resource lists, watches, gets and deletes one kind's objects. A list is
// the kind's typed list (*corev1.PodList for Pods), an object the typed
// object.
type Resource interface {
	List(ctx context.Context, o metav1.ListOptions) (runtime.Object, error)
	Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error)
	Get(ctx context.Context, name string) (runtime.Object, error)
	Delete(ctx context.Context, name string, o metav1.DeleteOptions) error
}

// Client reaches the API server over REST, one client per group version,
// all sharing cfg's transport and rate limit.
type Client struct {
	rest map[schema.GroupVersion]*rest.RESTClient
}

// New makes a Client of cfg, which it copies: its content types (protobuf,
// as ProtobufConfig sets), rate limit and user agent are kept.
func New(cfg *rest.Config) (*Client, error) {
	c := &Client{rest: map[schema.GroupVersion]*rest.RESTClient{}}
	base := rest.CopyConfig(cfg)
	if base.UserAgent == "" {
		base.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	// One rate limiter for all of them, as a clientset shares its own
	// (a negative QPS: none).
	if base.RateLimiter == nil && base.QPS >= 0 {
		qps, burst := base.QPS, base.Burst
		if qps == 0 {
			qps, burst = rest.DefaultQPS, rest.DefaultBurst
		}
		if burst <= 0 {
			return nil, fmt.Errorf("kubernetes client: burst %d with QPS %v: want a burst above 0", burst, qps)
		}
		base.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
	}
	for _, gvr := range kinds {
		gv := gvr.GroupVersion()
		if c.rest[gv] != nil {
			continue
		}
		rc, err := restClient(base, gv)
		if err != nil {
			return nil, err
		}
		c.rest[gv] = rc
	}
	return c, nil
}

func restClient(base *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	cfg := rest.CopyConfig(base)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.NegotiatedSerializer = codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", gv, err)
	}
	return rc, nil
}

func (c *Client) Resource(k Kind, ns string) Resource {
	gvr, ok := kinds[k]
	if !ok {
		panic(fmt.Sprintf("kubeclient: unknown kind %d", k))
	}
	return resource{c: c.rest[gvr.GroupVersion()], resource: gvr.Resource, ns: ns}
}

func (c *Client) Events() record.EventSink {
	return eventSink{c: c.rest[corev1.SchemeGroupVersion]}
}

func (c *Client) ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error) {
	path := "/apis/" + groupVersion
	if groupVersion == "v1" {
		path = "/api/v1"
	}
	// Discovery is asked for in JSON, as client-go's discovery client asks,
	// and decoded by the scheme's codecs like every other answer.
	list := &metav1.APIResourceList{}
	err := c.rest[corev1.SchemeGroupVersion].Get().AbsPath(path).SetHeader("Accept", runtime.ContentTypeJSON).
		Do(context.TODO()).Into(list)
	if err != nil {
		return nil, err
	}
	return list, nil
}

// As is what a Resource answered as the type the caller asked for (err
// passed through), or an error naming what came instead.
func As[T runtime.Object](obj runtime.Object, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("the API server answered with %T, not %T", obj, zero)
	}
	return t, nil
}

// resource asks for one kind's objects, as client-go's generated clients do.
type resource struct {
	c        *rest.RESTClient
	resource string
	ns       string
}

func (r resource) List(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	return r.c.Get().NamespaceIfScoped(r.ns, r.ns != "").Resource(r.resource).
		VersionedParams(&o, metav1.ParameterCodec).Timeout(timeout(o)).Do(ctx).Get()
}

func (r resource) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	o.Watch = true
	return r.c.Get().NamespaceIfScoped(r.ns, r.ns != "").Resource(r.resource).
		VersionedParams(&o, metav1.ParameterCodec).Timeout(timeout(o)).Watch(ctx)
}

func (r resource) Get(ctx context.Context, name string) (runtime.Object, error) {
	return r.c.Get().NamespaceIfScoped(r.ns, r.ns != "").Resource(r.resource).Name(name).Do(ctx).Get()
}

func (r resource) Delete(ctx context.Context, name string, o metav1.DeleteOptions) error {
	return r.c.Delete().NamespaceIfScoped(r.ns, r.ns != "").Resource(r.resource).Name(name).Body(&o).Do(ctx).Error()
}

// timeout is the request's own bound for a list or watch that names one.
func timeout(o metav1.ListOptions) time.Duration {
	if o.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*o.TimeoutSeconds) * time.Second
}

// eventSink posts Events to their own namespace, as client-go's
// EventSinkImpl does, for the recorder.
type eventSink struct{ c *rest.RESTClient }

func (s eventSink) Create(e *corev1.Event) (*corev1.Event, error) {
	out := &corev1.Event{}
	err := s.c.Post().NamespaceIfScoped(e.Namespace, e.Namespace != "").Resource("events").
		Body(e).Do(context.TODO()).Into(out)
	return out, err
}

func (s eventSink) Update(e *corev1.Event) (*corev1.Event, error) {
	out := &corev1.Event{}
	err := s.c.Put().NamespaceIfScoped(e.Namespace, e.Namespace != "").Resource("events").
		Name(e.Name).Body(e).Do(context.TODO()).Into(out)
	return out, err
}

func (s eventSink) Patch(e *corev1.Event, data []byte) (*corev1.Event, error) {
	out := &corev1.Event{}
	err := s.c.Patch(types.StrategicMergePatchType).NamespaceIfScoped(e.Namespace, e.Namespace != "").
		Resource("events").Name(e.Name).Body(data).Do(context.TODO()).Into(out)
	return out, err
}

// ListWatch lists and watches, for an informer, the objects of kind k in
// namespace ns that the field selector sel selects ("": all of them).
// Client c is asked only when the informer runs.
func ListWatch(c Interface, k Kind, ns, sel string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.Resource(k, ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.Resource(k, ns).Watch(ctx, o)
		},
	}
}
