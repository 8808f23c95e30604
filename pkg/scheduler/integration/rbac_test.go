package integration

import (
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The chart's scheduler identity may do what a kube-scheduler does, what
// the plugin adds and its leader election (off in the other tests, which
// run it in-process), and not what belongs to others: the agents' writes,
// other components' Leases, secrets, nodes, and no write to a pod but its
// binding (upstream kube-scheduler's own rights).
func TestSchedulerRBAC(t *testing.T) {
	setup(t)
	client, err := kubernetes.NewForConfig(cp.ServiceAccountConfig(t, chartNamespace, schedulerSA))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		verb, group, resource, sub, ns, name string
		allowed                              bool
	}{
		{"patch", "", "pods", "", "any", "", false}, // its decision rides on the Binding
		{"update", "", "pods", "", "any", "", false},
		{"create", "", "pods", "binding", "any", "", true}, // kube-scheduler's, and the decision's
		{"list", "topology.node.k8s.io", "noderesourcetopologies", "", "", "", true},
		{"watch", "topology.node.k8s.io", "noderesourcetopologies", "", "", "", true},
		{"update", "topology.node.k8s.io", "noderesourcetopologies", "", "", "", false}, // the agents'
		{"watch", "resource.k8s.io", "resourceslices", "", "", "", true},
		{"list", "resource.k8s.io", "resourceclaims", "", "any", "", true},
		{"create", "resource.k8s.io", "resourceslices", "", "", "", false}, // the DRA drivers'
		{"get", "coordination.k8s.io", "leases", "", chartNamespace, "locus-scheduler", true},
		{"update", "coordination.k8s.io", "leases", "", chartNamespace, "locus-scheduler", true},
		{"create", "coordination.k8s.io", "leases", "", chartNamespace, "", true},
		{"update", "coordination.k8s.io", "leases", "", "kube-system", "kube-controller-manager", false},
		{"get", "", "configmaps", "", "kube-system", "extension-apiserver-authentication", true},
		{"get", "", "secrets", "", "any", "", false},
		{"update", "", "nodes", "", "", "", false},
	} {
		r, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(callCtx(t), &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: tc.verb, Group: tc.group, Resource: tc.resource, Subresource: tc.sub, Namespace: tc.ns, Name: tc.name}}},
			metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed != tc.allowed {
			t.Errorf("%s %s/%s %s in %q (%s): allowed %v, want %v", tc.verb, tc.group, tc.resource, tc.sub, tc.ns, tc.name, r.Status.Allowed, tc.allowed)
		}
	}
}
