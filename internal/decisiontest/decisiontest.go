// Package decisiontest signs decisions in tests as the scheduler does,
// under a fixed test key: a test that writes a resource-status by hand
// signs it here, or it is not applied.
package decisiontest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/decisionsig"
	"github.com/locus-project/locus/pkg/workload"
)

// KeyFile is a key file holding the test key, id "test": a test writes it
// where its --decision-key-file or decisionKeyFile points.
const KeyFile = "test MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n"

// Keys are the keys of KeyFile.
func Keys(t testing.TB) *decisionsig.Keys {
	t.Helper()
	k, err := decisionsig.ParseKeys([]byte(KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Sign adds to ann (the decision's annotations, as on the pod) the
// signature of the decision for the pod with this UID on node.
func Sign(t testing.TB, uid, node string, ann map[string]string) {
	t.Helper()
	if err := workload.SignDecision(Keys(t), uid, node, ann); err != nil {
		t.Fatal(err)
	}
}

// SignPod signs the decision on a pod (its UID set) for node, in place.
func SignPod(t testing.TB, pod *corev1.Pod, node string) {
	t.Helper()
	Sign(t, string(pod.UID), node, pod.Annotations)
}
