package nodeagent_test

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/scheduler/core"
	"github.com/locus-project/locus/pkg/workload"
)

// movablePod opts in to CPUs of its own (cpus of them, under policy when
// set) and, when movable, to being moved.
func movablePod(name string, cpus int, policy cpualloc.Policy, movable bool) *corev1.Pod {
	ann := map[string]string{workload.AnnotationCPUSet: "true"}
	if movable {
		ann[workload.AnnotationMovable] = "true"
	}
	if policy != "" {
		ann[workload.AnnotationCPUPolicy] = string(policy)
	}
	limits := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(strconv.Itoa(cpus))}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{Limits: limits}}}}}
}

// movableCPUs reads each zone's locus.io/movable-cpus, by zone name.
func movableCPUs(t *testing.T, o *nrt.Object) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, z := range o.Zones {
		n, err := nrt.ReadMovableCPUs(z, 16)
		if err != nil {
			t.Fatal(err)
		}
		out[z.Name] = n
	}
	return out
}

// With --moves, two movable pods that fragment the fixture node are counted
// in the report (locus.io/movable-cpus), the scheduler's core reads the
// node as one where an 8-CPU full-pcpus pod fits only after moves, and
// that pod, bound as locus-scheduler binds it then (no CPU decision), is
// admitted on one NUMA node once the agent moved a movable pod, told as
// Repinned on it.
func TestMovesInKubernetesMode(t *testing.T) {
	n := newNode(t, cgroup.V2, false)
	n.start(func(o *kubeOptions) { o.Source.Moves = true })
	cg := func(p *corev1.Pod) string { return n.kubelet.ContainerCgroup(p, "app") }
	cpusOf := func(p *corev1.Pod) cpuset.CPUSet {
		// A fixture file being written reads empty between its truncation
		// and its write (a cgroup file is replaced at once): read it again.
		text := n.kubelet.File(cg(p), "cpuset.cpus")
		for end := time.Now().Add(2 * time.Second); text == "" && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
			text = n.kubelet.File(cg(p), "cpuset.cpus")
		}
		s, err := cpuset.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	nodeCPUs := []cpuset.CPUSet{cpuset.New(0, 1, 2, 3, 8, 9, 10, 11), cpuset.New(4, 5, 6, 7, 12, 13, 14, 15)}
	run := func(name string, movable bool, node int) *corev1.Pod {
		p := n.create(movablePod(name, 3, "", movable))
		n.waitFileMatch(cg(p), "cpuset.cpus", fmt.Sprintf("3 CPUs of node %d", node), func(s string) bool {
			c, err := cpuset.Parse(s)
			return err == nil && c.Size() == 3 && c.IsSubsetOf(nodeCPUs[node])
		})
		return p
	}
	// Three CPUs each, a core and a half: a on node 0, the filler and b
	// on node 1. With the filler gone, 8 CPUs are free but not 4 whole
	// cores: a full-pcpus pod of 8 fits nowhere until b leaves node 1.
	a := run("a", true, 0)
	filler := run("filler", false, 1)
	b := run("b", true, 1)
	deletePod(t, filler)
	n.kubelet.Remove(filler)
	before := map[string]cpuset.CPUSet{"a": cpusOf(a), "b": cpusOf(b)}

	var report *nrt.Object
	waitNRT(t, n.name, "counting a's and b's CPUs as movable, and the filler's gone", func(o *nrt.Object, ct nrt.CPUTopology) bool {
		m := movableCPUs(t, o)
		report = o
		_, fillerHeld := ct.Exclusive[n.ns+"/filler"]
		return m[nrt.ZoneName(0)] == 3 && m[nrt.ZoneName(1)] == 3 && !fillerHeld
	})
	cluster := core.NewCluster()
	cluster.SetNRT(n.name, report)
	for _, p := range []*corev1.Pod{a, b} { // the pods the scheduler watches bound there
		cluster.SetPod(p.Namespace+"/"+p.Name, n.name, nil)
	}
	req := core.Request{CPURequest: workload.CPURequest{CPUs: 8, Policy: cpualloc.FullPCPUs}}
	place, err := core.Place(cluster.Snapshot().Get(n.name), 16, req)
	if err != nil || !place.Moves || !slices.Equal(place.Result.NUMANodes, []int{1}) || !place.Result.CPUs.IsEmpty() {
		t.Fatalf("the scheduler's core on the report: %+v, %v; want a fit after moves on node 1, no CPUs", place, err)
	}

	// Bound as the plugin binds a pod that fits only after moves: no
	// locus.io/resource-status, the CPUs left to the agent.
	c := n.create(movablePod("c", 8, cpualloc.FullPCPUs, false))
	n.waitFileMatch(cg(c), "cpuset.cpus", "all of node 1", func(s string) bool { return s == nodeCPUs[1].String() })
	moved := cpusOf(b)
	if moved.Size() != 3 || !moved.IsSubsetOf(nodeCPUs[0]) || !moved.Intersection(cpusOf(a)).IsEmpty() {
		t.Errorf("b moved from %s to %s, beside a's %s: want 3 free CPUs of node 0", before["b"], moved, cpusOf(a))
	}
	if !cpusOf(a).Equals(before["a"]) {
		t.Errorf("a moved too (%s to %s), though b's move made room", before["a"], cpusOf(a))
	}
	e := waitEvent(t, n.ns, "Pod", b.Name, corev1.EventTypeNormal, "Repinned", before["b"].String(), moved.String(), n.ns+"/c")
	t.Logf("b: %s", e.Message)
	waitNRT(t, n.name, "counting b's CPUs on node 0 now, none on node 1", func(o *nrt.Object, ct nrt.CPUTopology) bool {
		m := movableCPUs(t, o)
		return m[nrt.ZoneName(0)] == 6 && m[nrt.ZoneName(1)] == 0 && ct.Exclusive[n.ns+"/c"] == nodeCPUs[1].String()
	})
}

// Without --moves the report counts no movable CPUs, even of pods that
// opted in: the switch is the node's, not the pod's.
func TestMovesOffByDefault(t *testing.T) {
	n := newNode(t, cgroup.V2, false)
	n.start()
	a := n.create(movablePod("a", 4, "", true))
	n.waitFileMatch(n.kubelet.ContainerCgroup(a, "app"), "cpuset.cpus", "4 CPUs", func(s string) bool {
		c, err := cpuset.Parse(s)
		return err == nil && c.Size() == 4
	})
	waitNRT(t, n.name, "holding a's CPUs, none counted movable", func(o *nrt.Object, ct nrt.CPUTopology) bool {
		m := movableCPUs(t, o)
		return ct.Exclusive[n.ns+"/a"] != "" && m[nrt.ZoneName(0)] == 0 && m[nrt.ZoneName(1)] == 0
	})
}
