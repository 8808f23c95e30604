package plugin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/decisiontest"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// keyArgs are the plugin's args with a key file.
func keyArgs(t *testing.T) runtime.Object {
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(decisiontest.KeyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	return &runtime.Unknown{Raw: []byte(`{"decisionKeyFile": "` + path + `"}`)}
}

// With a key, the decision the plugin writes carries its signature for the
// pod on the node, in the same Binding or patch: what the node's agent
// requires before it applies it.
func TestDecisionSigned(t *testing.T) {
	a, b := pod("a", nil), pod("b", nil)
	e := newEnv(t, keyArgs(t), []*nrt.Object{report(t, "n1", nil)}, a, b)
	keys := decisiontest.Keys(t)
	for _, p := range []*v1.Pod{a, b} {
		cs, _ := e.cycle(p, node("n1", "16"))
		if s := e.pl.Reserve(e.ctx, cs, p, "n1"); !s.IsSuccess() {
			t.Fatal(s)
		}
		// a is bound with its decision, b's is patched before binding.
		bind := e.pl.Bind
		if p == b {
			bind = e.pl.PreBind
		}
		if s := bind(e.ctx, cs, p, "n1"); !s.IsSuccess() {
			t.Fatal(s)
		}
	}
	written := map[string]map[string]string{}
	for _, act := range e.client.Actions() {
		switch c := act.(type) {
		case k8stesting.CreateAction:
			if act.GetSubresource() == "binding" {
				bd := c.GetObject().(*v1.Binding)
				written[bd.Name] = bd.Annotations
			}
		case k8stesting.PatchAction:
			var patch struct {
				Metadata struct{ Annotations map[string]string } `json:"metadata"`
			}
			if err := json.Unmarshal(c.GetPatch(), &patch); err != nil {
				t.Fatal(err)
			}
			written[c.GetName()] = patch.Metadata.Annotations
		}
	}
	for _, p := range []*v1.Pod{a, b} {
		ann := written[p.Name]
		if ann[workload.AnnotationDecisionSignature] == "" {
			t.Fatalf("%s: written %v, without a signature", p.Name, ann)
		}
		on := p.DeepCopy()
		on.Annotations = ann
		if err := workload.VerifyDecision(keys, on, "n1"); err != nil {
			t.Errorf("%s: the agent on n1 refuses it: %v", p.Name, err)
		}
		if err := workload.VerifyDecision(keys, on, "n2"); err == nil {
			t.Errorf("%s: an agent on n2 would apply it", p.Name)
		}
	}
}

// With a key, a bound pod's decision holds CPUs in the plugin's books only
// under its signature: a tenant's own resource-status (or one copied from
// another pod) holds none, so it cannot keep others off CPUs.
func TestUnsignedDecisionHoldsNothing(t *testing.T) {
	status := `{"cpuset": "4-5,12-13", "policy": "full-pcpus"}`
	forged := pod("forged", map[string]string{workload.AnnotationResourceStatus: status})
	forged.Spec.NodeName = "n1"
	copied := pod("copied", map[string]string{workload.AnnotationResourceStatus: `{"cpuset": "6-7,14-15", "policy": "full-pcpus"}`})
	copied.Spec.NodeName = "n1"
	decisiontest.Sign(t, "another-uid", "n1", copied.Annotations)
	real := pod("real", map[string]string{workload.AnnotationResourceStatus: `{"cpuset": "1-2,9-10", "policy": "full-pcpus"}`})
	real.Spec.NodeName = "n1"
	decisiontest.SignPod(t, real, "n1")
	e := newEnv(t, keyArgs(t), []*nrt.Object{report(t, "n1", nil)}, forged, copied, real)
	e.cycle(pod("p", nil), node("n1", "16")) // PreFilter waits for the informers
	if ex := e.pl.Cluster().Snapshot().Get("n1").State().Exclusive.CPUSet(); !ex.Equals(cpuset.New(1, 2, 9, 10)) {
		t.Fatalf("exclusive %s, want the signed decision's 1-2,9-10 only", ex)
	}
}

func TestArgsDecisionKeyFile(t *testing.T) {
	bad := &runtime.Unknown{Raw: []byte(`{"decisionKeyFile": "/nonexistent/keys"}`)}
	_, err := NewWithClient(t.Context(), bad, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "decisionKeyFile") {
		t.Fatalf("a missing key file: %v", err)
	}
}
