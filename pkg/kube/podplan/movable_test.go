package podplan

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/workload"
)

// TestFromPodMovable: a pod's locus.io/movable and its devices reach the
// workload as it is mapped; a bad value is told and leaves it in place.
func TestFromPodMovable(t *testing.T) {
	e := env(podB)
	for ann, want := range map[string]struct {
		movable bool
		reasons string
	}{
		"":      {false, ""},
		"true":  {true, ""},
		"false": {false, ""},
		"yes":   {false, workload.ReasonInvalidMovable},
	} {
		a := map[string]string{workload.AnnotationCPUSet: "true"}
		if ann != "" {
			a[workload.AnnotationMovable] = ann
		}
		w, err := FromPod(pod(a, nil, corev1.PodQOSBurstable, ctr{name: "app", req: "cpu=1", lim: "cpu=2,nvidia.com/gpu=1"}), e)
		if err != nil {
			t.Fatal(err)
		}
		if w.Plan.Movable != want.movable || reasons(w) != want.reasons {
			t.Errorf("%q: movable %v problems %q, want %v %q", ann, w.Plan.Movable, reasons(w), want.movable, want.reasons)
		}
		if strings.Join(w.Plan.DeviceResources, ",") != "nvidia.com/gpu" {
			t.Errorf("%q: devices %v", ann, w.Plan.DeviceResources)
		}
		if ok, why := workload.MayMove(w.Plan, false); want.movable && (ok || !strings.Contains(why, "devices")) {
			t.Errorf("%q: a pinned pod with a GPU: may move %v (%s), want not, for its devices", ann, ok, why)
		}
	}
}
