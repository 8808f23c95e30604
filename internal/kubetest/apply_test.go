package kubetest_test

import (
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/internal/kubetest"
)

func TestDecodeYAML(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string // kind/name of each object
		wantErr string
	}{
		{name: "empty", in: "", want: nil},
		{name: "documents and blank ones", in: "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n",
			want: []string{"ConfigMap/a", "Secret/b"}},
		{name: "json", in: `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}`, want: []string{"Namespace/n"}},
		{name: "list", in: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm-x}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm-y}}\n",
			want: []string{"ConfigMap/cm-x", "ConfigMap/cm-y"}},
		{name: "no kind", in: "apiVersion: v1\nmetadata: {name: a}\n", wantErr: "document 1: kind is missing"},
		{name: "no apiVersion", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: ConfigMap\nmetadata: {name: b}\n", wantErr: "document 2: apiVersion is missing"},
		{name: "no name", in: "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n", wantErr: "document 1 (ConfigMap): metadata.name is missing"},
		{name: "bad yaml", in: "apiVersion: v1\nkind: [\n", wantErr: "document 1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := kubetest.DecodeYAML([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("objects = %v, want %v", got, tt.want)
			}
		})
	}
}

// configMapData reads the data of the ConfigMap in a YAML file, as the user wrote it.
func configMapData(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cm.Data) == 0 {
		t.Fatalf("%s has no data", path)
	}
	return cm.Data
}

// The ConfigMaps of the memory QoS and memory locality documents, applied exactly as
// users keep them, are stored byte for byte; and the documents' update path for an
// existing ack-slo-config (kubectl patch with the whole file) works too.
func TestSeedConfigMapsApplyUnchanged(t *testing.T) {
	ctx := ctxFor(t)
	for _, file := range []string{"testdata/ack-slo-config.yaml", "testdata/ack-slo-pod-config.yaml"} {
		objs := cp.ApplyFile(t, file)
		if len(objs) != 1 {
			t.Fatalf("%s: applied %d objects, want 1", file, len(objs))
		}
		stored, err := cp.Client.CoreV1().ConfigMaps("kube-system").Get(ctx, objs[0].GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for key, want := range configMapData(t, file) {
			if stored.Data[key] != want {
				t.Errorf("%s: key %s stored as %q, want %q", file, key, stored.Data[key], want)
			}
		}
	}

	patch, err := os.ReadFile("testdata/ml-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	out, err := cp.Kubectl("patch", "cm", "-n", "kube-system", "ack-slo-config", "--patch", string(patch)).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl patch: %v\n%s", err, out)
	}
	stored, err := cp.Client.CoreV1().ConfigMaps("kube-system").Get(ctx, "ack-slo-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := configMapData(t, "testdata/ml-config.yaml")["resource-qos-config"]
	if got := stored.Data["resource-qos-config"]; got != want || !strings.Contains(got, "memoryLocality") {
		t.Fatalf("after the patch resource-qos-config = %q, want %q", got, want)
	}
}

var nrtResource = schema.GroupVersionResource{Group: "topology.node.k8s.io", Version: "v1alpha2", Resource: "noderesourcetopologies"}

func TestNodeResourceTopologyCRD(t *testing.T) {
	cp.InstallNodeResourceTopologyCRD(t)
	ctx := ctxFor(t)

	objs := cp.ApplyYAML(t, []byte(`
apiVersion: topology.node.k8s.io/v1alpha2
kind: NodeResourceTopology
metadata:
  name: nrt-node
topologyPolicies: ["None"]
attributes:
- {name: topologyManagerPolicy, value: none}
zones:
- name: node-0
  type: Node
  costs: [{name: node-0, value: 10}, {name: node-1, value: 21}]
  resources:
  - {name: cpu, capacity: "16", allocatable: "15", available: "11"}
  - {name: memory, capacity: 64Gi, allocatable: 63Gi, available: 40Gi}
- name: node-1
  type: Node
  resources:
  - {name: cpu, capacity: "16", allocatable: "16", available: "16"}
`))
	if len(objs) != 1 {
		t.Fatalf("applied %d objects, want 1", len(objs))
	}
	got, err := cp.Dynamic.Resource(nrtResource).Get(ctx, "nrt-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	zones, _, _ := unstructured.NestedSlice(got.Object, "zones")
	if len(zones) != 2 {
		t.Fatalf("stored %d zones, want 2: %v", len(zones), got.Object)
	}
	res, _, _ := unstructured.NestedSlice(zones[0].(map[string]any), "resources")
	if avail := res[0].(map[string]any)["available"]; avail != "11" {
		t.Fatalf("zone node-0 cpu available = %v, want 11", avail)
	}

	// The schema is enforced: zones is required.
	_, err = cp.Apply(ctx, []byte("apiVersion: topology.node.k8s.io/v1alpha2\nkind: NodeResourceTopology\nmetadata: {name: no-zones}\n"))
	if err == nil || !strings.Contains(err.Error(), "zones") {
		t.Fatalf("an NRT without zones: error = %v, want one about zones", err)
	}
}
