package nodeagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/status"
)

// What the tests look at: events, the NodeResourceTopology, the status.

// events lists the events on an object, oldest first.
func events(t *testing.T, ns, kind, name string) []corev1.Event {
	t.Helper()
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}.AsSelector().String()
	list, err := cp.Client.CoreV1().Events(ns).List(callCtx(t), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.Event) int { return a.FirstTimestamp.Compare(b.FirstTimestamp.Time) })
	return list.Items
}

// waitEvent waits for an event of the given type and reason on an object,
// posted by Locus, whose message contains each of parts.
func waitEvent(t *testing.T, ns, kind, name, typ, reason string, parts ...string) corev1.Event {
	t.Helper()
	var found corev1.Event
	var seen []string
	kubetest.WaitFor(t, typ+" event "+reason+" on "+kind+" "+ns+"/"+name, 20*time.Second, func(context.Context) (bool, error) {
		seen = seen[:0]
		for _, e := range events(t, ns, kind, name) {
			seen = append(seen, e.Type+" "+e.Reason+": "+e.Message)
			if e.Type != typ || e.Reason != reason || e.Source.Component != "locus" || e.ReportingController != "locus" {
				continue
			}
			all := true
			for _, p := range parts {
				all = all && strings.Contains(e.Message, p)
			}
			if all {
				found = e
				return true, nil
			}
		}
		return false, nil
	})
	return found
}

// nrtOf reads the node's NodeResourceTopology.
func nrtOf(t *testing.T, node string) (*nrt.Object, nrt.CPUTopology, string) {
	t.Helper()
	u, err := cp.Dynamic.Resource(nrt.GVR).Get(callCtx(t), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(u.Object)
	var o nrt.Object
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	ct, err := nrt.ReadCPUTopology(o.Metadata.Annotations[nrt.AnnotationCPUTopology])
	if err != nil {
		t.Fatal(err)
	}
	return &o, ct, u.GetResourceVersion()
}

// waitNRT waits until the node's NodeResourceTopology satisfies ok.
func waitNRT(t *testing.T, node, what string, ok func(*nrt.Object, nrt.CPUTopology) bool) {
	t.Helper()
	kubetest.WaitFor(t, "NodeResourceTopology "+node+" "+what, 20*time.Second, func(ctx context.Context) (bool, error) {
		if _, err := cp.Dynamic.Resource(nrt.GVR).Get(ctx, node, metav1.GetOptions{}); err != nil {
			return false, err
		}
		o, ct, _ := nrtOf(t, node)
		return ok(o, ct), nil
	})
}

// status reads the agent's status.json; before the agent first publishes
// it (its cgroup writes come first) the status is empty, so a wait on it
// waits rather than failing.
func (n *node) status() status.Status {
	n.t.Helper()
	st, err := status.Read(n.stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return status.Status{}
	}
	if err != nil {
		n.t.Fatal(err)
	}
	return st
}

// findWorkload finds a workload in a status.
func findWorkload(st status.Status, name string) (status.WorkloadStatus, bool) {
	for _, w := range st.Workloads {
		if w.Name == name {
			return w, true
		}
	}
	return status.WorkloadStatus{}, false
}

// setConfigMap creates or replaces a ConfigMap in kube-system.
func setConfigMap(t *testing.T, name, key, value string) {
	t.Helper()
	ctx := callCtx(t)
	cms := cp.Client.CoreV1().ConfigMaps("kube-system")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{key: value}}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
}

// fileBytes reads a file under the state directory.
func (n *node) fileBytes(name string) []byte {
	b, _ := os.ReadFile(filepath.Join(n.stateDir, name))
	return b
}
