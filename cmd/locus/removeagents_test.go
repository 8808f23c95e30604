package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/locus-project/locus/pkg/kube/kubeclient/clientset"
)

func TestRemoveAgents(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "locus", Name: "agent"}, Spec: appsv1.DaemonSetSpec{Selector: sel}}
	agentPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "locus", Name: "agent-x", Labels: map[string]string{"app": "agent"}}}
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "locus", Name: "scheduler", Labels: map[string]string{"app": "scheduler"}}}

	// Its pods gone (the garbage collector's work): done, the DaemonSet deleted.
	client := fake.NewSimpleClientset(ds, other)
	var out bytes.Buffer
	if err := removeAgents(context.Background(), clientset.Wrap(client), "locus", "agent", &out); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AppsV1().DaemonSets("locus").Get(context.Background(), "agent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("DaemonSet after remove-agents: %v, want not found", err)
	}
	// Gone already: nothing to do.
	if err := removeAgents(context.Background(), clientset.Wrap(client), "locus", "agent", &out); err != nil {
		t.Errorf("second run: %v", err)
	}
	// An agent that does not stop: it gives up at the deadline, saying how many are left.
	client = fake.NewSimpleClientset(ds.DeepCopy(), agentPod)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	err := removeAgents(ctx, clientset.Wrap(client), "locus", "agent", &out)
	if err == nil || !strings.Contains(err.Error(), "1 agent pods of locus/agent still there") {
		t.Errorf("error = %v, want the pods still there", err)
	}
}
