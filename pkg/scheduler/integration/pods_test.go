package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/decisiontest"
	"github.com/locus-project/locus/internal/kubetest"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// createDeployment creates the pods a ReplicaSet would make from the
// Deployments in file (the harness runs no controllers), named
// <deployment>-<i>, and applies its other objects; all in ns.
func createDeployment(t *testing.T, file, ns string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubetest.DecodeYAML(raw)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var names []string
	for _, o := range objs {
		o.SetNamespace(ns)
		if o.GetKind() != "Deployment" {
			doc, _ := json.Marshal(o.Object)
			if _, err := cp.Apply(callCtx(t), doc); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			continue
		}
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
			t.Fatal(err)
		}
		for i := range int(*d.Spec.Replicas) {
			tpl := d.Spec.Template.DeepCopy()
			pod := &corev1.Pod{ObjectMeta: tpl.ObjectMeta, Spec: tpl.Spec}
			pod.Name, pod.Namespace = fmt.Sprintf("%s-%d", d.Name, i), ns
			cp.CreatePod(t, pod)
			names = append(names, pod.Name)
		}
	}
	return names
}

// createPod creates an opted-in pod with one container (request, limit).
func createPod(t *testing.T, ns, name, request, limit string, ann map[string]string) {
	t.Helper()
	all := map[string]string{workload.AnnotationCPUSet: "true"}
	for k, v := range ann {
		all[k] = v
	}
	cp.CreatePod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: all},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(request)},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limit)}}}}}})
}

// placed is a bound pod and the decision written on it.
type placed struct {
	pod *corev1.Pod
	rs  workload.ResourceStatus
}

// waitScheduled waits until the pods are bound with a decision.
func waitScheduled(t *testing.T, ns string, names []string) map[string]placed {
	t.Helper()
	out := map[string]placed{}
	kubetest.WaitFor(t, fmt.Sprintf("%d pods in %s to be bound with a decision", len(names), ns), 60*time.Second, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			if _, done := out[name]; done {
				continue
			}
			pod, err := cp.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			raw, ok := pod.Annotations[workload.AnnotationResourceStatus]
			if pod.Spec.NodeName == "" || !ok {
				return false, fmt.Errorf("pod %s not scheduled yet: %s", name, condition(pod))
			}
			rs, err := workload.ParseResourceStatus(raw)
			if err != nil {
				t.Fatalf("pod %s: %v", name, err)
			}
			out[name] = placed{pod, rs}
		}
		return true, nil
	})
	return out
}

// checkSigned checks that every decision carries the scheduler's
// signature for its pod on its node: what the node's agent requires before
// it applies one.
func checkSigned(t *testing.T, pods map[string]placed) {
	t.Helper()
	for name, p := range pods {
		if err := workload.VerifyDecision(decisiontest.Keys(t), p.pod, p.pod.Spec.NodeName); err != nil {
			t.Errorf("pod %s: %v", name, err)
		}
	}
}

func condition(pod *corev1.Pod) string {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return fmt.Sprintf("PodScheduled=%s %s: %s", c.Status, c.Reason, c.Message)
		}
	}
	return "no PodScheduled condition"
}

// waitPending waits until the scheduler has given up on a pod for now, and
// returns its condition's message.
func waitPending(t *testing.T, ns, name string, says ...string) string {
	t.Helper()
	var msg string
	kubetest.WaitFor(t, "pod "+name+" to be unschedulable saying "+strings.Join(says, ", "), 60*time.Second, func(ctx context.Context) (bool, error) {
		pod, err := cp.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if pod.Spec.NodeName != "" {
			t.Fatalf("pod %s was bound to %s", name, pod.Spec.NodeName)
		}
		for _, c := range pod.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
				continue
			}
			msg = c.Message
			for _, s := range says {
				if !strings.Contains(msg, s) {
					return false, fmt.Errorf("condition says %q", msg)
				}
			}
			return true, nil
		}
		return false, nil
	})
	return msg
}

// checkPlacements checks every node's pods: exclusive CPUs disjoint, whole
// cores, never reserved; every pod's CPUs on the one NUMA node its decision
// names; static-burst pods only on CPUs no pod holds alone, and never more
// than one CPU of requests on a CPU.
func checkPlacements(t *testing.T, pods map[string]placed) {
	t.Helper()
	byNode := map[string][]string{}
	for name, p := range pods {
		byNode[p.pod.Spec.NodeName] = append(byNode[p.pod.Spec.NodeName], name)
	}
	for node, names := range byNode {
		sort.Strings(names)
		exclusive := cpuset.New()
		burst := map[int]int64{}
		for _, name := range names {
			rs := pods[name].rs
			cpus := rs.CPUs
			if !cpus.Intersection(reserved).IsEmpty() {
				t.Errorf("%s/%s: CPUs %s include reserved ones", node, name, cpus)
			}
			numa := map[int]bool{}
			for _, c := range cpus.List() {
				numa[numaOf(c)] = true
			}
			if len(numa) != 1 || len(rs.NUMANodes) != 1 || !numa[rs.NUMANodes[0]] {
				t.Errorf("%s/%s: CPUs %s on NUMA nodes %v, decision says %v", node, name, cpus, numa, rs.NUMANodes)
			}
			if rs.Policy == cpualloc.StaticBurst {
				share := cpualloc.BurstShare(requestMilli(pods[name].pod), cpus.Size())
				for _, c := range cpus.List() {
					burst[c] += share
				}
				continue
			}
			if both := exclusive.Intersection(cpus); !both.IsEmpty() {
				t.Errorf("%s/%s: CPUs %s overlap other pods' exclusive CPUs %s", node, name, cpus, both)
			}
			exclusive = exclusive.Union(cpus)
			for _, c := range cpus.List() {
				if !cpus.Contains(c ^ 8) {
					t.Errorf("%s/%s: CPUs %s are not whole cores", node, name, cpus)
					break
				}
			}
		}
		for c, m := range burst {
			if exclusive.Contains(c) || m > 1000 {
				t.Errorf("%s: CPU %d carries %dm of static-burst requests (exclusive: %s)", node, c, m, exclusive)
			}
		}
	}
}

func requestMilli(pod *corev1.Pod) int64 {
	var sum int64
	for _, c := range pod.Spec.Containers {
		sum += c.Resources.Requests.Cpu().MilliValue()
	}
	return sum
}

// waitReported waits until each node's agent reports exactly the pods
// placed there, on the CPUs the scheduler chose.
func waitReported(t *testing.T, c *cluster, pods map[string]placed) {
	t.Helper()
	for node := range c.nodes {
		wantEx, wantBurst := map[string]string{}, map[string]string{}
		for _, p := range pods {
			if p.pod.Spec.NodeName != node {
				continue
			}
			key := p.pod.Namespace + "/" + p.pod.Name
			if p.rs.Policy == cpualloc.StaticBurst {
				wantBurst[key] = p.rs.CPUs.String()
			} else {
				wantEx[key] = p.rs.CPUs.String()
			}
		}
		kubetest.WaitFor(t, "node "+node+"'s NodeResourceTopology to report its pods' CPUs", 30*time.Second, func(ctx context.Context) (bool, error) {
			u, err := cp.Dynamic.Resource(nrt.GVR).Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			ct, err := nrt.ReadCPUTopology(u.GetAnnotations()[nrt.AnnotationCPUTopology])
			if err != nil {
				return false, err
			}
			gotBurst := map[string]string{}
			for k, b := range ct.StaticBurst {
				gotBurst[k] = b.CPUs
			}
			if !sameMap(ct.Exclusive, wantEx) || !sameMap(gotBurst, wantBurst) {
				return false, fmt.Errorf("reported exclusive %v static-burst %v; want %v and %v", ct.Exclusive, gotBurst, wantEx, wantBurst)
			}
			return true, nil
		})
	}
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
