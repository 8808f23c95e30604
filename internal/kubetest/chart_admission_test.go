package kubetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

// Each agent writes only its own node's NodeResourceTopology. The chart's
// rendered RBAC and admission policy, applied to the real apiserver, with
// the tokens the kubelet would mount into the agents' pods on two nodes:
// agent A creates, updates and deletes its own report and is refused, with
// a message naming both nodes, every write of B's; a token of the agents'
// account bound to no pod writes no report; the admin is not affected.
func TestHelmChartAgentWritesOnlyItsOwnReport(t *testing.T) {
	ns := cp.CreateNamespace(t, "nrt-owner")
	cp.InstallNodeResourceTopologyCRD(t)
	rendered := helm(t, "", "template", "locus", kubetest.RepoPath(t, chartDir), "--namespace", ns,
		"--show-only", "templates/rbac.yaml", "--show-only", "templates/agent-admission.yaml")
	if !strings.Contains(rendered, "kind: ValidatingAdmissionPolicy\n") {
		t.Fatalf("the chart renders no ValidatingAdmissionPolicy:\n%s", rendered)
	}
	objs := cp.ApplyYAML(t, []byte(rendered))
	t.Cleanup(func() { // the policy is cluster-wide: leave the shared control plane as it was
		for _, o := range objs {
			if o.GetNamespace() == "" && strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
				_ = cp.Kubectl("delete", strings.ToLower(o.GetKind()), o.GetName()).Run()
			}
		}
	})

	agents := map[string]dynamic.NamespaceableResourceInterface{}
	for _, node := range []string{ns + "-a", ns + "-b"} {
		cp.CreateNode(t, node, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")})
		pod := cp.CreatePod(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "agent-" + node, Namespace: ns},
			Spec: corev1.PodSpec{ServiceAccountName: "locus-agent", NodeName: node,
				Containers: []corev1.Container{{Name: "agent", Image: "locus"}}},
		})
		agents[node] = nrtClient(t, cp.PodServiceAccountConfig(t, pod))
	}
	a, b := agents[ns+"-a"], agents[ns+"-b"]
	nodeA, nodeB := ns+"-a", ns+"-b"

	// The policy takes effect once the apiserver has loaded it.
	kubetest.WaitFor(t, "the admission policy to refuse a write of another node's report", 60*time.Second,
		func(ctx context.Context) (bool, error) {
			_, err := a.Create(ctx, report(nodeB), metav1.CreateOptions{})
			if err == nil {
				return false, a.Delete(ctx, nodeB, metav1.DeleteOptions{})
			}
			return strings.Contains(err.Error(), "may write only"), nil
		})

	ctx := ctxFor(t)
	mustWrite := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		want := "the agent of node " + nodeA + " may write only the NodeResourceTopology " + nodeA + ", not " + nodeB
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it refused with %q", what, err, want)
		}
	}
	_, err := a.Create(ctx, report(nodeA), metav1.CreateOptions{})
	mustWrite("agent A creates its own report", err)
	_, err = b.Create(ctx, report(nodeB), metav1.CreateOptions{})
	mustWrite("agent B creates its own report", err)

	other, err := a.Get(ctx, nodeB, metav1.GetOptions{})
	mustWrite("agent A reads B's report", err)
	other.SetLabels(map[string]string{"forged": "true"})
	_, err = a.Update(ctx, other, metav1.UpdateOptions{})
	refused("agent A updates B's report", err)
	refused("agent A deletes B's report", a.Delete(ctx, nodeB, metav1.DeleteOptions{}))
	_, err = a.Create(ctx, report("elsewhere"), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "not elsewhere") {
		t.Errorf("agent A creates a report of a node that does not exist: %v", err)
	}

	own, err := a.Get(ctx, nodeA, metav1.GetOptions{})
	mustWrite("agent A reads its own report", err)
	own.SetLabels(map[string]string{"updated": "true"})
	_, err = a.Update(ctx, own, metav1.UpdateOptions{})
	mustWrite("agent A updates its own report", err)
	mustWrite("agent A deletes its own report (uninstall)", a.Delete(ctx, nodeA, metav1.DeleteOptions{}))

	unbound := nrtClient(t, cp.ServiceAccountConfig(t, ns, "locus-agent"))
	if _, err := unbound.Create(ctx, report(nodeA), metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "lacks") {
		t.Errorf("a token of the agents' account bound to no pod creates a report: %v", err)
	}
	admin := cp.Dynamic.Resource(nrt.GVR)
	mustWrite("the admin deletes B's report", admin.Delete(ctx, nodeB, metav1.DeleteOptions{}))
}

func nrtClient(t *testing.T, cfg *rest.Config) dynamic.NamespaceableResourceInterface {
	t.Helper()
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.Resource(nrt.GVR)
}

func report(node string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": nrt.GVR.GroupVersion().String(), "kind": "NodeResourceTopology",
		"metadata":         map[string]any{"name": node},
		"topologyPolicies": []any{"None"},
		"zones":            []any{},
	}}
}
