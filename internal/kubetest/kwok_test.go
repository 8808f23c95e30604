package kubetest_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/internal/kubetest"
)

func TestKwokMakesFakeNodeReadyAndRunsItsPods(t *testing.T) {
	kwok := cp.StartKwok(t)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	names := cp.CreateFakeNodes(t, "kwok-node", 5, capacity)
	// Not annotated for kwok: it must stay untouched.
	plain := cp.CreateNode(t, "kwok-ignored", capacity)

	for _, name := range names {
		node := cp.WaitNodeReady(t, name, 60*time.Second)
		if got := node.Status.Allocatable[corev1.ResourceCPU]; got.Cmp(resource.MustParse("32")) != 0 {
			t.Errorf("fake node %s allocatable cpu = %s, want 32", name, got.String())
		}
	}
	fake := cp.CreateFakeNode(t, "kwok-single", capacity)
	cp.WaitNodeReady(t, fake.Name, 60*time.Second)

	ns := cp.CreateNamespace(t, "kwok")
	pod := cp.CreatePod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "on-fake", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	})
	cp.BindPod(t, pod, fake.Name)
	kubetest.WaitFor(t, "the pod on the fake node to run", 60*time.Second, func(ctx context.Context) (bool, error) {
		p, err := cp.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})

	if running, log := kwok.Running(); !running {
		t.Fatalf("kwok exited:\n%s", log)
	}
	after, err := cp.Client.CoreV1().Nodes().Get(ctxFor(t), plain.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != plain.ResourceVersion {
		t.Errorf("kwok changed node %s, which is not annotated for it", plain.Name)
	}
}
