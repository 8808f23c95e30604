package podplan

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/workload"
)

// A pod being deleted still says Running while the kubelet stops its
// containers and removes their cgroups. It stays a workload holding its
// CPU need, with no container to write and no problem to report, until its
// pod cgroup is gone too.
func TestFromPodTerminating(t *testing.T) {
	p := pod(map[string]string{workload.AnnotationCPUSet: "true", workload.AnnotationCPUPolicy: "nonsense"}, nil, corev1.PodQOSGuaranteed,
		ctr{name: "app", req: "cpu=2,memory=1Gi", lim: "cpu=2,memory=1Gi", id: "containerd://" + id1, running: true},
		ctr{name: "side", req: "cpu=1,memory=1Gi", lim: "cpu=1,memory=1Gi", id: "containerd://" + id2, running: true})
	const podG = "kubepods/pod" + uid
	// Running: the container whose cgroup is gone and the bad policy are problems.
	w, err := FromPod(p, env(podG, podG+"/"+id1))
	if err != nil || reasons(w) != "ContainerCgroupNotFound,InvalidCPUPolicy" || w.Plan.Terminating {
		t.Fatalf("running: err %v, problems %v, terminating %v", err, w.Problems, w.Plan.Terminating)
	}

	now := metav1.Now()
	p.DeletionTimestamp = &now
	w, err = FromPod(p, env(podG, podG+"/"+id1))
	if err != nil {
		t.Fatal(err)
	}
	if !w.Plan.Terminating || len(w.Plan.Containers) != 0 || len(w.Problems) != 0 {
		t.Fatalf("terminating: %v, containers %+v, problems %v; want terminating, none, none",
			w.Plan.Terminating, w.Plan.Containers, w.Problems)
	}
	if !w.Plan.CPU.Exclusive || w.Plan.CPU.CPUs != 3 || w.Plan.Name != "team/web" || w.Plan.Cgroup != podG {
		t.Fatalf("terminating pod lost its CPU need or identity: %+v", w.Plan)
	}
	// Its pod cgroup gone, it is no workload at all.
	if _, err := FromPod(p, env()); !errors.Is(err, ErrNoCgroup) {
		t.Fatalf("pod cgroup gone: err %v, want ErrNoCgroup", err)
	}
}
