package nodeagent_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/workload"
)

// TestInvalidMemoryQoSToldOnArrival: a pod whose memoryQOS annotation
// cannot be read is told so once, when it arrives, by a Warning naming the
// annotation, the field and the value; its memory files are left as they
// are while a good pod beside it gets its own; fixed, it gets them too.
func TestInvalidMemoryQoSToldOnArrival(t *testing.T) {
	n := configNode(t, cgroup.V1, false, lsConfig(true, 50))
	good := n.create(webPod("good"))
	bad := webPod("bad")
	bad.Annotations = map[string]string{workload.AnnotationMemoryQoS: `{"policy": "on"}`}
	bad = n.create(bad)
	goodCg, badCg := n.kubelet.ContainerCgroup(good, "web"), n.kubelet.ContainerCgroup(bad, "web")
	n.start()
	half := strconv.FormatInt(gib/2, 10)
	n.waitFile(goodCg, "memory.low", half)
	const msg = `annotation koordinator.sh/memoryQOS: policy: "on" is not one of auto, default, none`
	waitEvent(t, n.ns, "Pod", "bad", corev1.EventTypeWarning, "InvalidMemoryQOS", msg)
	// Several resyncs with the bad text: the files stay, nothing is told again.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got := n.kubelet.File(badCg, "memory.low"); got != "0" {
			t.Fatalf("memory.low of the pod whose annotation cannot be read = %s, want it left at 0", got)
		}
	}
	told := 0
	for _, e := range events(t, n.ns, "Pod", "bad") {
		if e.Reason == "InvalidMemoryQOS" {
			told += int(max(e.Count, 1))
		}
	}
	if told != 1 {
		t.Errorf("InvalidMemoryQOS told %d times, want once", told)
	}
	patch := fmt.Sprintf(`{"metadata": {"annotations": {%q: "{\"policy\": \"default\"}"}}}`, workload.AnnotationMemoryQoS)
	if _, err := cp.Client.CoreV1().Pods(n.ns).Patch(callCtx(t), "bad", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	n.waitFile(badCg, "memory.low", half)
}
