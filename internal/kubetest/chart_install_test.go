package kubetest_test

import (
	"context"
	"fmt"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/sloconfig"
)

// access is one question to the authorizer about the agent's service account.
type access struct {
	verb, group, resource, subresource, namespace, name string
	allowed                                             bool
}

func (a access) String() string {
	r := a.resource
	if a.group != "" {
		r += "." + a.group
	}
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	if a.name != "" {
		r += " " + a.name
	}
	return fmt.Sprintf("%s %s in %q", a.verb, r, a.namespace)
}

// agentAccess is the agent's ClusterRole as a table: what it needs, and a sample
// of what it must not be able to do.
var agentAccess = []access{
	{verb: "list", resource: "pods", namespace: "", allowed: true},
	{verb: "watch", resource: "pods", namespace: "team-a", allowed: true},
	{verb: "create", resource: "events", namespace: "team-a", allowed: true},
	{verb: "patch", resource: "events", namespace: "team-a", allowed: true},
	{verb: "list", resource: "configmaps", namespace: "kube-system", allowed: true},
	{verb: "watch", resource: "configmaps", namespace: "kube-system", allowed: true},
	{verb: "create", group: "topology.node.k8s.io", resource: "noderesourcetopologies", allowed: true},
	{verb: "get", group: "topology.node.k8s.io", resource: "noderesourcetopologies", allowed: true},
	{verb: "update", group: "topology.node.k8s.io", resource: "noderesourcetopologies", allowed: true},
	{verb: "delete", group: "topology.node.k8s.io", resource: "noderesourcetopologies", allowed: true},
	{verb: "get", group: "apps", resource: "daemonsets", namespace: "locus-system", name: "locus-agent", allowed: true},
	{verb: "list", resource: "nodes", allowed: true},
	{verb: "watch", resource: "nodes", allowed: true},
	{verb: "list", group: "resource.k8s.io", resource: "resourceslices", allowed: true},
	{verb: "watch", group: "resource.k8s.io", resource: "resourceclaims", namespace: "team-a", allowed: true},

	{verb: "update", group: "resource.k8s.io", resource: "resourceclaims", subresource: "status", namespace: "team-a"},
	{verb: "create", group: "resource.k8s.io", resource: "resourceslices"},
	{verb: "get", resource: "pods", namespace: "team-a"},
	{verb: "create", resource: "pods", namespace: "team-a"},
	{verb: "update", resource: "pods", namespace: "team-a"},
	{verb: "delete", resource: "pods", namespace: "team-a"},
	{verb: "create", resource: "pods", subresource: "binding", namespace: "team-a"},
	{verb: "create", resource: "pods", subresource: "eviction", namespace: "team-a"},
	{verb: "get", resource: "configmaps", namespace: "kube-system"},
	{verb: "list", resource: "configmaps", namespace: "team-a"},
	{verb: "update", resource: "configmaps", namespace: "kube-system"},
	{verb: "get", resource: "secrets", namespace: "kube-system"},
	{verb: "list", resource: "secrets", namespace: ""},
	{verb: "get", resource: "nodes"},
	{verb: "patch", resource: "nodes"},
	{verb: "create", group: "events.k8s.io", resource: "events", namespace: "team-a"},
	{verb: "update", resource: "nodes"},
	{verb: "delete", resource: "events", namespace: "team-a"},
	{verb: "get", group: "apps", resource: "daemonsets", namespace: "locus-system", name: "other"},
	{verb: "list", group: "apps", resource: "daemonsets", namespace: "locus-system"},
	{verb: "delete", group: "apps", resource: "daemonsets", namespace: "locus-system", name: "locus-agent"},
}

// A real helm install into a real apiserver: the user's ack-slo-config is left as it
// was, the missing ack-slo-pod-config is created, the agent's service account can do
// exactly what agentAccess says, and neither upgrade nor uninstall removes the
// cluster configuration. It runs on a control plane of its own because it changes
// the kube-system ConfigMaps other tests use.
func TestHelmChartInstallKeepsUserConfigAndGrantsLeastPrivilege(t *testing.T) {
	own := kubetest.Start(t)
	chart := kubetest.RepoPath(t, chartDir)
	ctx := ctxFor(t)
	const ns = "locus-system"
	if _, err := own.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	own.ApplyFile(t, "testdata/ack-slo-config.yaml")
	userConfig := configMapData(t, "testdata/ack-slo-config.yaml")

	helm(t, own.Kubeconfig, "install", "locus", chart, "--namespace", ns, "--set", "sloConfig.manage=create")

	cms := own.Client.CoreV1().ConfigMaps("kube-system")
	checkConfigs := func(stage string) {
		t.Helper()
		user, err := cms.Get(ctx, "ack-slo-config", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		if user.Data[sloconfig.ConfigKeyResourceQoS] != userConfig[sloconfig.ConfigKeyResourceQoS] || user.Labels["app.kubernetes.io/managed-by"] != "" {
			t.Fatalf("%s: the user's ack-slo-config changed: %+v", stage, user)
		}
		pod, err := cms.Get(ctx, "ack-slo-pod-config", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: the chart's ack-slo-pod-config: %v", stage, err)
		}
		if _, err := sloconfig.ParseNamespaces(pod.Data[sloconfig.ConfigKeyNamespaces]); err != nil {
			t.Fatalf("%s: the chart's ack-slo-pod-config: %v", stage, err)
		}
	}
	checkConfigs("after install")

	ds, err := own.Client.AppsV1().DaemonSets(ns).Get(ctx, "locus-agent", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := ds.Spec.Template.Spec
	if !spec.HostPID || spec.ServiceAccountName != "locus-agent" || spec.Containers[0].Image != "ghcr.io/locus-project/locus:"+chartAppVersion(t) {
		t.Fatalf("agent DaemonSet: hostPID %v, service account %q, image %q", spec.HostPID, spec.ServiceAccountName, spec.Containers[0].Image)
	}
	if sc := spec.Containers[0].SecurityContext; sc == nil || sc.Privileged == nil || *sc.Privileged || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Fatalf("agent DaemonSet as stored: security context %+v, want not privileged, read-only root", sc)
	}

	agent, err := kubernetes.NewForConfig(own.ServiceAccountConfig(t, ns, "locus-agent"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agentAccess {
		if got := allowed(ctx, t, agent, a); got != a.allowed {
			t.Errorf("agent may %s: %v, want %v", a, got, a.allowed)
		}
	}

	// On upgrade the ConfigMap the install created exists, so the chart no longer
	// renders it; its keep policy stops Helm from deleting it.
	helm(t, own.Kubeconfig, "upgrade", "locus", chart, "--namespace", ns, "--set", "sloConfig.manage=create")
	checkConfigs("after upgrade")

	// No controllers run here to carry out the pre-delete hook's Job (test/e2e runs
	// it on a real node): uninstall without it.
	helm(t, own.Kubeconfig, "uninstall", "locus", "--namespace", ns, "--no-hooks")
	checkConfigs("after uninstall")
	if _, err := own.Client.AppsV1().DaemonSets(ns).Get(ctx, "locus-agent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("agent DaemonSet after uninstall: %v, want not found", err)
	}
}

func allowed(ctx context.Context, t *testing.T, client kubernetes.Interface, a access) bool {
	t.Helper()
	review, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: a.namespace, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Name: a.name,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("access review %s: %v", a, err)
	}
	return review.Status.Allowed
}
