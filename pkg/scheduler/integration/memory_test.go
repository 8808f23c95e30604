package integration

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/kubetest"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// A pod asking more memory than one NUMA node of the machine has (24Gi,
// zones of 16Gi) lands on the node whose zones hold it together, not on
// the one whose zones pinned pods have filled; a second such pod stays
// Pending, the full node's reason saying memory is short on its NUMA
// nodes (kube-scheduler's own count refuses the other, whose 32Gi the
// first pod took most of).
func TestMemoryLandsWhereItFits(t *testing.T) {
	c := newCluster(t, 2, false)
	full, free := c.ns+"-0", c.ns+"-1"
	// Two pinned pods run on full and hold 6Gi of each of its zones:
	// 20Gi are left in all. Their CPUs make full the node MostAllocated
	// prefers, memory aside.
	held, mem := map[string]workload.Assignment{}, map[string]cpualloc.Memory{}
	for name, cpus := range map[string]cpuset.CPUSet{"a": cpuset.New(1, 9), "b": cpuset.New(4, 12)} {
		cp.CreatePod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns},
			Spec: corev1.PodSpec{NodeName: full, Containers: []corev1.Container{{Name: "app", Image: "app"}}}})
		held[c.ns+"/"+name] = workload.Assignment{CPUs: cpus, Policy: cpualloc.FullPCPUs}
		mem[c.ns+"/"+name] = cpualloc.Memory{Bytes: 6 << 30}
	}
	publishMemory(t, full, machine, held, mem)
	publish(t, free, machine, nil)
	startScheduler(t)

	createMemoryPod(t, c.ns, "big", "2", "24Gi")
	got := waitScheduled(t, c.ns, []string{"big"})["big"]
	if got.pod.Spec.NodeName != free {
		t.Fatalf("big went to %s; only %s holds 24Gi", got.pod.Spec.NodeName, free)
	}
	if got.rs.CPUs.Size() != 2 || len(got.rs.NUMANodes) != 1 {
		t.Errorf("big's decision: CPUs %s on NUMA nodes %v; want 2 CPUs of one node (its memory spills, its CPUs do not)", got.rs.CPUs, got.rs.NUMANodes)
	}
	checkSigned(t, map[string]placed{"big": got})

	createMemoryPod(t, c.ns, "again", "2", "24Gi")
	waitPending(t, c.ns, "again", "0/2 nodes are available", "1 node(s) had not enough free memory on the NUMA nodes that could also hold the pod's 2 CPUs (memory 24Gi)")
}

// publishMemory writes a node's report with its pinned pods' memory.
func publishMemory(t *testing.T, node string, s fixture.Shape, held map[string]workload.Assignment, mem map[string]cpualloc.Memory) {
	t.Helper()
	o, err := nrt.Build(nrt.Input{Node: node, Topology: fixture.MustBuild(s), Reserved: reserved, Assignments: held, Memory: mem})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Dynamic.Resource(nrt.GVR).Create(callCtx(t), toUnstructured(t, o), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubetest.WaitFor(t, "report "+node, 10*time.Second, func(ctx context.Context) (bool, error) {
		_, err := cp.Dynamic.Resource(nrt.GVR).Get(ctx, node, metav1.GetOptions{})
		return err == nil, err
	})
}

// createMemoryPod creates an opted-in Guaranteed pod with this many CPUs
// and this much memory.
func createMemoryPod(t *testing.T, ns, name, cpus, memory string) {
	t.Helper()
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus), corev1.ResourceMemory: resource.MustParse(memory)}
	cp.CreatePod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{workload.AnnotationCPUSet: "true"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{Requests: res, Limits: res}}}}})
}
