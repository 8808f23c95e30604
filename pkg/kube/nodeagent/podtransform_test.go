package nodeagent

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/kube/podcgroup"
	"github.com/locus-project/locus/pkg/kube/podplan"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// fullPod is a pod as the API server hands it out: defaulted volumes,
// environment, probes, conditions, managed fields and kubectl's copy.
func fullPod() *corev1.Pod {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	ctr := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: "nginx", Command: []string{"nginx"}, Args: []string{"-g", "daemon off;"},
			Env:          []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}},
			VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets"}},
			Ports:        []corev1.ContainerPort{{ContainerPort: 80}}, LivenessProbe: probe, ReadinessProbe: probe,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}
	}
	running := func(name, id string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, ContainerID: id, Ready: true,
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "oom"}}}
	}
	always := corev1.ContainerRestartPolicyAlways
	sidecar := ctr("proxy")
	sidecar.RestartPolicy = &always
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1", ResourceVersion: "7",
			Labels:        map[string]string{workload.LabelQoSClass: "LSR"},
			Annotations:   map[string]string{"cpuset-scheduler": "true", workload.AnnotationMemoryQoS: `{"policy": "auto"}`, lastApplied: `{"kind":"Pod","spec":{"containers":[]}}`},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}}},
		Spec: corev1.PodSpec{NodeName: "n1", InitContainers: []corev1.Container{sidecar}, Containers: []corev1.Container{ctr("web")},
			Volumes:     []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}},
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}},
			Affinity:    &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSGuaranteed,
			Conditions:            []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			InitContainerStatuses: []corev1.ContainerStatus{running("proxy", "containerd://b")},
			ContainerStatuses:     []corev1.ContainerStatus{running("web", "containerd://a")}},
	}
}

// A slimmed pod maps to the same workload as the whole one, keeps the
// annotations the agent reads, and is smaller.
func TestSlimPodKeepsWhatTheAgentReads(t *testing.T) {
	env := podplan.Env{Driver: podcgroup.Cgroupfs, Exists: func(string) bool { return true },
		Topology: fixture.MustBuild(fixture.MemoryOnly), Trust: workload.Trust{Node: "n1"}}
	whole, slim := fullPod(), fullPod()
	slimPod(slim)

	want, errWant := podplan.FromPod(whole, env)
	got, errGot := podplan.FromPod(slim, env)
	if (errWant == nil) != (errGot == nil) || !reflect.DeepEqual(got, want) {
		t.Errorf("slimmed pod maps to\n%+v, %v\nthe whole pod to\n%+v, %v", got, errGot, want, errWant)
	}
	memWant, _ := workload.PodMemory(whole)
	memGot, _ := workload.PodMemory(slim)
	if memGot != memWant {
		t.Errorf("memory request %+v, want %+v", memGot, memWant)
	}
	if _, ok := slim.Annotations[lastApplied]; ok || len(slim.Annotations) != 2 {
		t.Errorf("annotations %v: want the two the agent reads, without kubectl's copy", slim.Annotations)
	}
	if slim.ManagedFields != nil || slim.Spec.Volumes != nil || slim.Spec.Containers[0].Env != nil ||
		slim.Spec.Containers[0].LivenessProbe != nil || slim.Status.Conditions != nil ||
		slim.Status.ContainerStatuses[0].LastTerminationState.Terminated != nil {
		t.Errorf("fields the agent never reads are still held: %+v", slim)
	}
	if slim.Spec.InitContainers[0].RestartPolicy == nil || slim.Status.ContainerStatuses[0].State.Running == nil {
		t.Error("a sidecar's restart policy or a container's running state was dropped")
	}
	a, _ := json.Marshal(whole)
	b, _ := json.Marshal(slim)
	t.Logf("JSON of the pod: %d bytes whole, %d slimmed", len(a), len(b))
	if len(b) >= len(a)*2/3 {
		t.Errorf("slimmed pod %d bytes of JSON, the whole one %d: want under two thirds", len(b), len(a))
	}
}
