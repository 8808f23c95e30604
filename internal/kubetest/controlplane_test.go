package kubetest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/locus-project/locus/internal/kubetest"
)

// cp is shared by the package's tests: each uses names of its own.
var cp *kubetest.ControlPlane

func TestMain(m *testing.M) { kubetest.Main(m, &cp) }

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestNodePodBindingRoundTrip(t *testing.T) {
	ctx := ctxFor(t)
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("8"),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := cp.CreateNode(t, "bind-node", capacity)
	if got := node.Status.Allocatable[corev1.ResourceCPU]; got.Cmp(resource.MustParse("8")) != 0 {
		t.Fatalf("node allocatable cpu = %s, want 8", got.String())
	}

	ns := cp.CreateNamespace(t, "bind")
	pod := cp.CreatePod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "nginx", Namespace: ns,
			Annotations: map[string]string{"cpuset-scheduler": "true"},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "nginx", Image: "nginx",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")},
			},
		}}},
	})
	if pod.Spec.NodeName != "" {
		t.Fatalf("new pod already on node %q", pod.Spec.NodeName)
	}
	bound := cp.BindPod(t, pod, node.Name)
	if bound.Spec.NodeName != node.Name {
		t.Fatalf("bound pod nodeName = %q, want %q", bound.Spec.NodeName, node.Name)
	}

	// Read back through a field selector, the way a node agent lists its pods.
	list, err := cp.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node.Name})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "nginx" || list.Items[0].Annotations["cpuset-scheduler"] != "true" {
		t.Fatalf("pods on %s = %+v, want the annotated nginx pod", node.Name, list.Items)
	}
}

func TestKubeconfigWorksWithKubectl(t *testing.T) {
	out, err := cp.Kubectl("version", "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl version: %v\n%s", err, out)
	}
	// Both sides carry the release's version: kubectl refuses a server whose
	// version it cannot parse.
	if n := strings.Count(string(out), `"gitVersion": "v1.33.13"`); n != 2 {
		t.Fatalf("want client and server at v1.33.13, got:\n%s", out)
	}
}

func TestServiceAccountTokenIsSubjectToRBAC(t *testing.T) {
	ctx := ctxFor(t)
	ns := cp.CreateNamespace(t, "rbac")
	sa := cp.ServiceAccountConfig(t, ns, "reader")
	client, err := kubernetes.NewForConfig(sa)
	if err != nil {
		t.Fatal(err)
	}
	canListPods := func() bool {
		review, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: "list", Resource: "pods",
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return review.Status.Allowed
	}
	if canListPods() {
		t.Fatal("a service account with no binding may list pods")
	}
	if _, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("listing pods without a binding succeeded")
	}

	// A Role of our own: the built-in view role is aggregated by a controller that
	// does not run here, so it has no rules.
	_, err = cp.Client.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cp.Client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "reader", Namespace: ns}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubetest.WaitFor(t, "the pod-reader binding to apply", 10*time.Second, func(context.Context) (bool, error) {
		return canListPods(), nil
	})
	if _, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("listing pods with the binding: %v", err)
	}
}

func TestFindBinariesNamesTheBuildScript(t *testing.T) {
	empty := t.TempDir()
	_, err := kubetest.FindBinaries(empty)
	if err == nil {
		t.Fatal("no error for an empty directory")
	}
	for _, want := range []string{empty, "kube-apiserver", "etcd", "kubectl", "kwok", "hack/build-controlplane.sh", kubetest.BinDirEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	// One missing binary is named alone.
	partial := t.TempDir()
	for _, name := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if err := os.WriteFile(filepath.Join(partial, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, err = kubetest.FindBinaries(partial)
	if err == nil || !strings.Contains(err.Error(), "missing in "+partial+": kwok;") {
		t.Fatalf("error = %v, want kwok named as the only missing binary", err)
	}

	if _, err := kubetest.FindBinaries(cp.Binaries.Dir); err != nil {
		t.Fatalf("the running control plane's own binaries: %v", err)
	}
}
