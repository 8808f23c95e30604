package nodeagent_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/locus-project/locus/pkg/kube/kubeclient/clientset"
	"github.com/locus-project/locus/pkg/kube/nodeagent"
	"github.com/locus-project/locus/pkg/source"
)

// What the runtime says of a pod is checked before any request, and an
// error names the field; a pod of that name with another UID is not the
// one the runtime creates; the one asked for is found with one List,
// narrowed to its name on the node.
func TestLookup(t *testing.T) {
	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-1"},
		Spec: corev1.PodSpec{NodeName: "n1"}})
	src, err := nodeagent.NewSource(nodeagent.SourceOptions{NodeName: "n1", Client: clientset.Wrap(client), Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ref  source.PodRef
		want string
	}{
		{source.PodRef{Namespace: "NS!", Name: "web", UID: "uid-1"}, "pod sandbox namespace"},
		{source.PodRef{Namespace: "ns", Name: strings.Repeat("w", 300), UID: "uid-1"}, "pod sandbox name"},
		{source.PodRef{Namespace: "ns", Name: "web"}, "pod sandbox uid"},
		{source.PodRef{Namespace: "ns", Name: "web", UID: strings.Repeat("u", 65)}, "pod sandbox uid"},
	} {
		client.ClearActions()
		found, err := src.Lookup(context.Background(), []source.PodRef{tc.ref})
		if found != 0 || err == nil || !strings.Contains(err.Error(), tc.want) || len(client.Actions()) != 0 {
			t.Errorf("%+v: found %d, error %v, %d requests; want an error naming %s and no request", tc.ref, found, err, len(client.Actions()), tc.want)
		}
	}
	client.ClearActions()
	found, err := src.Lookup(context.Background(), []source.PodRef{{Namespace: "ns", Name: "web", UID: "uid-2"}})
	if found != 0 || err == nil || !strings.Contains(err.Error(), "not bound to node n1") || source.Gone(err, "ns", "web") {
		t.Errorf("another UID: found %d, error %v; want not bound, not gone (a pod of that name is)", found, err)
	}
	found, err = src.Lookup(context.Background(), []source.PodRef{{Namespace: "ns", Name: "deleted", UID: "uid-3"}})
	if found != 0 || !source.Gone(err, "ns", "deleted") || !strings.Contains(err.Error(), "ns/deleted") {
		t.Errorf("no pod of that name: found %d, error %v; want it gone", found, err)
	}
	client.ClearActions()
	found, err = src.Lookup(context.Background(), []source.PodRef{{Namespace: "ns", Name: "web", UID: "uid-1"}})
	if found != 1 || err != nil {
		t.Fatalf("found %d, error %v", found, err)
	}
	acts := client.Actions()
	if len(acts) != 1 || acts[0].GetVerb() != "list" {
		t.Fatalf("requests %v, want one list", acts)
	}
	if sel := acts[0].(k8stesting.ListAction).GetListRestrictions().Fields.String(); sel != "metadata.name=web,spec.nodeName=n1" {
		t.Errorf("field selector %q", sel)
	}
}
