package plugin

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/scheduler"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// kube-scheduler's own informer factory keeps every pod's and node's
// managed fields in 1.33; with the plugin registered, its cache keeps none,
// and the objects' other metadata is as it came.
func TestManagedFieldsNotKept(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "creator", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}}}
	p := pod("p", nil)
	p.ManagedFields = managed
	n := node("a", "16").Node()
	n.ManagedFields = managed
	n.Labels = map[string]string{"zone": "z"}

	cached := func(t *testing.T, withPlugin bool) (*v1.Pod, *v1.Node) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		client := fake.NewClientset(p.DeepCopy(), n.DeepCopy())
		factory := scheduler.NewInformerFactory(client, 0)
		pods, nodes := factory.Core().V1().Pods(), factory.Core().V1().Nodes()
		pods.Informer()
		nodes.Informer()
		if withPlugin {
			dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{nrt.GVR: nrt.Kind + "List"})
			startPlugin(t, ctx, client, factory, dyn, nil, &activator{})
		}
		factory.Start(ctx.Done())
		factory.WaitForCacheSync(ctx.Done())
		gotPod, err := pods.Lister().Pods(p.Namespace).Get(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		gotNode, err := nodes.Lister().Get(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		return gotPod, gotNode
	}

	// Without the plugin: if kube-scheduler drops them itself one day, the
	// plugin's transform is no longer needed.
	bareP, bareN := cached(t, false)
	if len(bareP.ManagedFields) == 0 || len(bareN.ManagedFields) == 0 {
		t.Fatalf("kube-scheduler's factory alone dropped managed fields (pod %d, node %d entries)",
			len(bareP.ManagedFields), len(bareN.ManagedFields))
	}
	gotP, gotN := cached(t, true)
	if len(gotP.ManagedFields) != 0 || len(gotN.ManagedFields) != 0 {
		t.Errorf("with the plugin, the cache keeps %d managed fields entries of the pod and %d of the node, want none",
			len(gotP.ManagedFields), len(gotN.ManagedFields))
	}
	if gotP.UID != p.UID || gotP.Annotations[workload.AnnotationCPUSet] != "true" || gotN.Labels["zone"] != "z" {
		t.Errorf("the rest of the metadata changed: pod %+v, node %+v", gotP.ObjectMeta, gotN.ObjectMeta)
	}
}

func TestDropManagedFieldsIdempotent(t *testing.T) {
	p := pod("p", nil)
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}}
	for i := 0; i < 2; i++ {
		out, err := dropManagedFields(p)
		if err != nil || out != any(p) || p.ManagedFields != nil {
			t.Fatalf("pass %d: %v, %v, %v", i, out, err, p.ManagedFields)
		}
	}
	// A tombstone is not metadata: handed back as it came.
	tomb := "not an object"
	if out, err := dropManagedFields(tomb); err != nil || out != any(tomb) {
		t.Fatalf("tombstone: %v, %v", out, err)
	}
}
