package plugin

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

const gpuDriver = "gpu.example.com"

// newDRAEnv is newEnv with the framework's DRA manager, built as
// kube-scheduler builds it where it runs DynamicResources, over these DRA
// objects.
func newDRAEnv(t *testing.T, nrts []*nrt.Object, objs ...runtime.Object) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	var dynObjs []runtime.Object
	for _, o := range nrts {
		dynObjs = append(dynObjs, toUnstructured(t, o))
	}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{nrt.GVR: nrt.Kind + "List"}, dynObjs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	claims := assumecache.NewAssumeCache(klog.FromContext(ctx), factory.Resource().V1beta1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	slices, err := tracker.StartTracker(ctx, tracker.Options{SliceInformer: factory.Resource().V1beta1().ResourceSlices(), KubeClient: client})
	if err != nil {
		t.Fatal(err)
	}
	act := &activator{}
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithPodActivator(act),
		frameworkruntime.WithClientSet(client), frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSharedDRAManager(dynamicresources.NewDRAManager(ctx, claims, slices, factory)))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := NewWithClient(ctx, nil, fh, dynamicReports{dyn})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return &env{t: t, ctx: ctx, client: client, pl: pl, act: act}
}

func gpuClass() *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "` + gpuDriver + `"`}}}}}
}

// gpuSlice publishes one GPU on node, on NUMA node numa.
func gpuSlice(node string, numa int64) *resourceapi.ResourceSlice {
	return &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"}, Spec: resourceapi.ResourceSliceSpec{
		Driver: gpuDriver, NodeName: node, Pool: resourceapi.ResourcePool{Name: node + "-gpus", ResourceSliceCount: 1},
		Devices: []resourceapi.Device{{Name: "gpu", Basic: &resourceapi.BasicDevice{Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			workload.AttributeNUMANode: {IntValue: &numa}}}}}}}
}

// gpuClaim asks for one GPU; allocated on node, it holds that node's.
func gpuClaim(name, allocatedOn string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("claim-" + name), ResourceVersion: "1"},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{
			{Name: "dev", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}}}}
	if allocatedOn != "" {
		c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
			Results: []resourceapi.DeviceRequestAllocationResult{{Request: "dev", Driver: gpuDriver, Pool: allocatedOn + "-gpus", Device: "gpu"}}}}
	}
	return c
}

// pinned is an opted-in pod of cpus whole CPUs.
func pinned(name, cpus string) *v1.Pod {
	c := st.MakeContainer().Name("app").ResourceRequests(map[v1.ResourceName]string{v1.ResourceCPU: cpus}).
		ResourceLimits(map[v1.ResourceName]string{v1.ResourceCPU: cpus}).Obj()
	return st.MakePod().Namespace("ns").Name(name).UID(name).Annotation(workload.AnnotationCPUSet, "true").Containers([]v1.Container{c}).Obj()
}

func withClaim(p *v1.Pod, claim string) *v1.Pod {
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}}
	return p
}

// A pod whose claim is pending is scored, on each node, with its CPUs next
// to the GPU the claim would be allocated there: the node whose GPU's
// NUMA node is free wins over the one packing prefers, whose GPU's NUMA
// node is full. The pod without a claim, and the pod whose claim was
// allocated before the cycle (on a node of its own), are scored as before.
func TestPendingClaimScoresTheForeseenDevice(t *testing.T) {
	hog := map[string]workload.Assignment{"ns/hog": {CPUs: cpuset.New(4, 5, 6, 7, 12, 13, 14, 15), Policy: cpualloc.FullPCPUs}}
	e := newDRAEnv(t, []*nrt.Object{report(t, "aligned", nil), report(t, "full", hog)},
		gpuClass(), gpuSlice("aligned", 1), gpuSlice("full", 1), gpuClaim("pending", ""), gpuClaim("allocated", "elsewhere"),
		&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hog"}, Spec: v1.PodSpec{NodeName: "full"}})
	nodes := []*framework.NodeInfo{node("aligned", "16"), node("full", "16")}
	two := func(name string) *v1.Pod { return pinned(name, "2") }
	for _, tc := range []struct {
		name    string
		pod     *v1.Pod
		pending bool
		foresee bool
		best    string
	}{
		{name: "pending claim", pod: withClaim(two("a"), "pending"), pending: true, foresee: true, best: "aligned"},
		{name: "no claim", pod: two("b"), best: "full"},
		{name: "claim allocated before the cycle", pod: withClaim(two("c"), "allocated"), best: "full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, fits := e.cycle(tc.pod, nodes...)
			s, _ := readState(cs)
			if s.pending != tc.pending || (s.foresee != nil) != tc.foresee {
				t.Fatalf("pending %v, foreseen %v; want %v, %v", s.pending, s.foresee != nil, tc.pending, tc.foresee)
			}
			scores := map[string]int64{}
			for _, ni := range nodes {
				if !fits[ni.Node().Name].IsSuccess() {
					t.Fatalf("Filter %s: %v", ni.Node().Name, fits[ni.Node().Name])
				}
				score, status := e.pl.Score(e.ctx, cs, tc.pod, ni)
				if !status.IsSuccess() {
					t.Fatal(status)
				}
				scores[ni.Node().Name] = score
			}
			other := map[string]string{"aligned": "full", "full": "aligned"}[tc.best]
			if scores[tc.best] <= scores[other] {
				t.Fatalf("scores %v; want %s above %s", scores, tc.best, other)
			}
		})
	}
}

// Where the scheduler does not run DynamicResources, no pending claim is
// foreseen: the pod is scored as one without devices.
func TestPendingClaimWithoutDRAManager(t *testing.T) {
	e := newEnv(t, nil, []*nrt.Object{report(t, "n", nil)})
	cs, _ := e.cycle(withClaim(pinned("a", "2"), "pending"), node("n", "16"))
	if s, _ := readState(cs); s.foresee != nil {
		t.Fatal("a pending claim foreseen without the framework's DRA manager")
	}
}

// The decision written for a pod whose claim was pending has its CPUs
// next to the device the claim was allocated in the cycle, though Reserve
// chose them before the allocation, by packing, on the other NUMA node.
func TestDecisionFollowsTheDeviceAllocatedInTheCycle(t *testing.T) {
	p := withClaim(pinned("a", "2"), "pending")
	e := newDRAEnv(t, []*nrt.Object{report(t, "n", nil)}, gpuClass(), gpuSlice("n", 1), gpuClaim("pending", ""), p)
	cs, _ := e.cycle(p, node("n", "16"))
	if s := e.pl.Reserve(e.ctx, cs, p, "n"); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s, _ := readState(cs); !slices.Equal(s.final.Result.NUMANodes, []int{0}) {
		t.Fatalf("Reserve chose NUMA nodes %v; want packing's 0, the device unknown yet", s.final.Result.NUMANodes)
	}
	// The DynamicResources plugin's PreBind writes the allocation.
	claim := gpuClaim("pending", "n")
	claim.ResourceVersion = "2" // the DRA manager keeps the newest version it saw
	if _, err := e.client.ResourceV1beta1().ResourceClaims("ns").UpdateStatus(e.ctx, claim, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the allocation in the DRA manager", func() bool {
		c, err := e.pl.dra.claim("ns", "pending")
		return err == nil && c.Status.Allocation != nil
	})
	if s := e.pl.PreBind(e.ctx, cs, p, "n"); !s.IsSuccess() {
		t.Fatal(s)
	}
	got, err := e.client.CoreV1().Pods("ns").Get(e.ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := workload.ParseResourceStatus(got.Annotations[workload.AnnotationResourceStatus])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rs.NUMANodes, []int{1}) || rs.CPUs.Size() != 2 {
		t.Fatalf("decision %+v; want 2 CPUs of NUMA node 1, the GPU's", rs)
	}
	if held := e.pl.Cluster().Snapshot().Get("n").State().Exclusive.CPUSet(); !held.Equals(rs.CPUs) {
		t.Fatalf("the cluster holds %s for the pod; want the decision's %s", held, rs.CPUs)
	}
}
