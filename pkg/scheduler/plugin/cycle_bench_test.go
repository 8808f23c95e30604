package plugin

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	st "k8s.io/kubernetes/pkg/scheduler/testing"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// BenchmarkPluginCycle is the plugin's share of the scheduling cycles of
// the scale run (pkg/scheduler/scale): 1000 nodes of 2 × 48 cores × 2
// threads, each with a heartbeat, as many pods of 1-16 whole CPUs one
// after the other, and between two cycles a pod with a decision moving
// to another node (two views change). Each cycle is what the framework
// asks of the plugin: PreFilter, then, unless PreFilter said Skip, Filter
// on nodes until 420 pass (the framework's 42 % at 1000 nodes), starting
// where the last cycle stopped, then Score on those 420.
//
// In "one-full" one node has no CPU free, so that not every node fits
// (the plugin's Filter then runs on every node the framework filters).
func BenchmarkPluginCycle(b *testing.B) {
	b.Run("all-fit", func(b *testing.B) { benchmarkPluginCycle(b, false, "") })
	b.Run("one-full", func(b *testing.B) { benchmarkPluginCycle(b, true, "") })
	// As the scale run's pods: each asks for 256Mi of memory too, so
	// that every placement places memory as well.
	b.Run("memory", func(b *testing.B) { benchmarkPluginCycle(b, false, "256Mi") })
}

func benchmarkPluginCycle(b *testing.B, oneFull bool, memory string) {
	const nodes, feasible = 1000, 420
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shape := fixture.Intel2S96C
	pl, kn, infos := listedEnv(ctx, b, shape, nodes, time.Now())
	if oneFull {
		all := fixture.MustBuild(shape).CPUSet().Difference(cpuset.New(0, shape.TotalCores()))
		pl.Cluster().SetPod("ns/full", kn[nodes-1].Name, nil)
		held := map[string]workload.Assignment{"ns/full": {CPUs: all, Policy: cpualloc.FullPCPUs}}
		pl.Cluster().SetNRT(kn[nodes-1].Name, beating(b, shape, kn[nodes-1].Name, held, time.Now()))
	}
	var pods []*v1.Pod
	for c := 1; c <= 16; c++ {
		cpu := fmt.Sprint(c)
		res := map[v1.ResourceName]string{v1.ResourceCPU: cpu}
		if memory != "" {
			res[v1.ResourceMemory] = memory
		}
		ctr := st.MakeContainer().Name("app").ResourceRequests(res).ResourceLimits(res).Obj()
		pods = append(pods, st.MakePod().Namespace("ns").Name(fmt.Sprintf("p%d", c)).UID(cpu).
			Annotations(map[string]string{workload.AnnotationCPUSet: "true"}).Containers([]v1.Container{ctr}).Obj())
	}
	churn := &workload.Assignment{CPUs: cpuset.New(50, 50+shape.TotalCores()), Policy: cpualloc.FullPCPUs}
	start, skipped := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		pl.Cluster().SetPod("ns/churn", kn[(i*7)%nodes].Name, churn)
		pod := pods[(i*5)%len(pods)]
		cs := framework.NewCycleState()
		_, s := pl.PreFilter(ctx, cs, pod)
		passed := make([]*framework.NodeInfo, 0, feasible)
		if !s.IsSuccess() && !s.IsSkip() {
			b.Fatalf("PreFilter: %v", s)
		}
		if s.IsSkip() {
			skipped++
			for k := 0; k < feasible; k++ {
				passed = append(passed, infos[(start+k)%nodes])
			}
			start = (start + feasible) % nodes
		} else {
			k := 0
			for ; k < nodes && len(passed) < feasible; k++ {
				ni := infos[(start+k)%nodes]
				if pl.Filter(ctx, cs, pod, ni).IsSuccess() {
					passed = append(passed, ni)
				}
			}
			start = (start + k) % nodes
		}
		if len(passed) != feasible {
			b.Fatalf("%d nodes passed", len(passed))
		}
		if s := pl.PreScore(ctx, cs, pod, passed); !s.IsSuccess() {
			b.Fatalf("PreScore: %v", s)
		}
		for _, ni := range passed {
			if _, s := pl.Score(ctx, cs, pod, ni); !s.IsSuccess() {
				b.Fatalf("Score: %v", s)
			}
		}
	}
	b.ReportMetric(float64(skipped)/float64(b.N), "skips/cycle")
}

// listedEnv is the plugin with a framework whose snapshot lists n nodes
// of the shape (as the framework's own list: allFit reads it), each with
// its NodeResourceTopology, its heartbeat at beat.
func listedEnv(ctx context.Context, tb testing.TB, shape fixture.Shape, n int, beat time.Time) (*Plugin, []*v1.Node, []*framework.NodeInfo) {
	tb.Helper()
	var kn []*v1.Node
	cpus := fmt.Sprint(shape.TotalCores() * shape.ThreadsPerCore)
	for i := range n {
		kn = append(kn, st.MakeNode().Name(fmt.Sprintf("n%04d", i)).
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cpus, v1.ResourceMemory: "512Gi"}).Obj())
	}
	snapshot := cache.NewSnapshot(nil, kn)
	infos, _ := snapshot.NodeInfos().List()
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{nrt.GVR: nrt.Kind + "List"})
	fh, err := frameworkruntime.NewFramework(ctx, nil, nil, frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory), frameworkruntime.WithSnapshotSharedLister(snapshot))
	if err != nil {
		tb.Fatal(err)
	}
	pl, err := NewWithClient(ctx, nil, fh, dynamicReports{dyn})
	if err != nil {
		tb.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for _, node := range kn {
		pl.Cluster().SetNRT(node.Name, beating(tb, shape, node.Name, nil, beat))
	}
	return pl, kn, infos
}

// beating is the report of a node of the shape, with its first core
// reserved, these holdings and its heartbeat at beat.
func beating(tb testing.TB, shape fixture.Shape, node string, held map[string]workload.Assignment, beat time.Time) *nrt.Object {
	tb.Helper()
	o, err := nrt.Build(nrt.Input{Node: node, Topology: fixture.MustBuild(shape), Reserved: cpuset.New(0, shape.TotalCores()),
		Assignments: held})
	if err != nil {
		tb.Fatal(err)
	}
	if o.Metadata.Annotations == nil {
		o.Metadata.Annotations = map[string]string{}
	}
	o.Metadata.Annotations[nrt.AnnotationHeartbeat] = beat.UTC().Format(time.RFC3339)
	return o
}
