package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// machine is two NUMA nodes of four two-thread cores: node 0 has CPUs 0-3
// and 8-11, node 1 4-7 and 12-15; c and c^8 are siblings. Core 0 is
// reserved.
var (
	machine = fixture.Shape{Name: "2s-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 4,
		ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30}
	reserved = cpuset.New(0, 8)
)

// env is the plugin on fake clients, as the framework would build it.
type env struct {
	t      *testing.T
	ctx    context.Context
	client *fake.Clientset
	dyn    *dynfake.FakeDynamicClient
	pl     *Plugin
	act    *activator
}

// newEnv starts the plugin with these NodeResourceTopology objects and
// pods already in the cluster, and args (nil: defaults).
func newEnv(t *testing.T, args runtime.Object, nrts []*nrt.Object, pods ...*v1.Pod) *env {
	t.Helper()
	return newEnvWith(t, nil, args, nrts, pods...)
}

// newEnvWith is newEnv whose NodeResourceTopology client is first given
// to prepare (to add a reactor, say) before the plugin starts.
func newEnvWith(t *testing.T, prepare func(*dynfake.FakeDynamicClient), args runtime.Object, nrts []*nrt.Object, pods ...*v1.Pod) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var objs []runtime.Object
	for _, p := range pods {
		objs = append(objs, p)
	}
	client := fake.NewClientset(objs...)
	var dynObjs []runtime.Object
	for _, o := range nrts {
		dynObjs = append(dynObjs, toUnstructured(t, o))
	}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{nrt.GVR: nrt.Kind + "List"}, dynObjs...)
	if prepare != nil {
		prepare(dyn)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	act := &activator{}
	pl := startPlugin(t, ctx, client, factory, dyn, args, act)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return &env{t: t, ctx: ctx, client: client, dyn: dyn, pl: pl, act: act}
}

// startPlugin builds the plugin as the framework would, on these clients
// and this informer factory, which the caller starts.
func startPlugin(t *testing.T, ctx context.Context, client *fake.Clientset, factory informers.SharedInformerFactory,
	dyn *dynfake.FakeDynamicClient, args runtime.Object, act *activator) *Plugin {
	t.Helper()
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithPodActivator(act),
		frameworkruntime.WithClientSet(client), frameworkruntime.WithInformerFactory(factory))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := NewWithClient(ctx, args, fh, dynamicReports{dyn})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// activator records the pods the plugin activates, and retries them at
// once with retry when it is set (as the scheduling queue may: an
// activated pod can be popped again right away).
type activator struct {
	mu        sync.Mutex
	activated []string
	retry     func(*v1.Pod)
}

func (a *activator) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	a.mu.Lock()
	for k := range pods {
		a.activated = append(a.activated, k)
	}
	retry := a.retry
	a.mu.Unlock()
	if retry != nil {
		for _, p := range pods {
			retry(p)
		}
	}
}

func (a *activator) count(key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, k := range a.activated {
		if k == key {
			n++
		}
	}
	return n
}

// dynamicReports reads the reports through a dynamic client (a fake one),
// each page sent on as the JSON the API server would write.
type dynamicReports struct{ dyn dynamic.Interface }

func (d dynamicReports) ListPage(ctx context.Context, opts metav1.ListOptions) (io.ReadCloser, error) {
	list, err := d.dyn.Resource(nrt.GVR).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	raw, err := list.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(raw)), nil
}

func (d dynamicReports) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return d.dyn.Resource(nrt.GVR).Watch(ctx, opts)
}

func toUnstructured(t testing.TB, o *nrt.Object) *unstructured.Unstructured {
	t.Helper()
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	return u
}

func report(t testing.TB, node string, held map[string]workload.Assignment) *nrt.Object {
	t.Helper()
	o, err := nrt.Build(nrt.Input{Node: node, Topology: fixture.MustBuild(machine), Reserved: reserved, Assignments: held})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func node(name string, cpus string) *framework.NodeInfo {
	ni := framework.NewNodeInfo()
	ni.SetNode(st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cpus, v1.ResourceMemory: "32Gi"}).Obj())
	return ni
}

// pod is the seed's go-demo pod: request 1, limit 4, cpuset-scheduler.
func pod(name string, ann map[string]string) *v1.Pod {
	all := map[string]string{workload.AnnotationCPUSet: "true"}
	for k, v := range ann {
		all[k] = v
	}
	c := st.MakeContainer().Name("go-demo").ResourceRequests(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).
		ResourceLimits(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()
	return st.MakePod().Namespace("ns").Name(name).UID(name).Annotations(all).Containers([]v1.Container{c}).Obj()
}

// cycle runs PreFilter and Filter on the nodes, as the framework does.
func (e *env) cycle(p *v1.Pod, nodes ...*framework.NodeInfo) (*framework.CycleState, map[string]*framework.Status) {
	e.t.Helper()
	cs := framework.NewCycleState()
	if _, s := e.pl.PreFilter(e.ctx, cs, p); !s.IsSuccess() {
		e.t.Fatalf("PreFilter %s: %v", p.Name, s)
	}
	out := map[string]*framework.Status{}
	for _, ni := range nodes {
		out[ni.Node().Name] = e.pl.Filter(e.ctx, cs, p, ni)
	}
	return cs, out
}

// waitFor waits for an informer event to reach the plugin.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
