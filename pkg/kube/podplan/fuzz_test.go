package podplan

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Anyone who may create a pod writes its annotations and labels, and the
// scheduler and every node agent read them: nothing in them may cost more
// than a bounded time, escape the pod's cgroup or flood an Event.

// FuzzPod maps a pod whose annotations, labels, CPU limit and container ID
// are hostile, as the agent and the scheduler do.
func FuzzPod(f *testing.F) {
	f.Add("true", "full-pcpus", `{"cpuset": "2-3"}`, `{"policy": "auto"}`, "LS", "2", "containerd://"+id1)
	f.Add(" TRUE ", "static-burst", `{"cpuset": "0-9223372036854775807"}`, `{"policy": "none"}`, "BE", "9223372036854775807", "docker://../../x")
	f.Add("true", "", "", "", "", "1e18", "cri-o://"+id2+"/../..")
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add("true", s, s, s, s, "4", s)
		f.Add(s, "full-pcpus", `{"cpuset": `+strconv.Quote(s)+`}`, `{"policy": "auto", "lowLimitPercent": `+s+`}`, s, s, "containerd://"+s)
	}
	top := env().Topology
	f.Fuzz(func(t *testing.T, optIn, policy, status, memQoS, class, limit, containerID string) {
		// The policy's text is the scope's too, and the decision's the
		// partition's.
		p := pod(map[string]string{workload.AnnotationCPUSet: optIn, workload.AnnotationCPUPolicy: policy, workload.AnnotationResourceStatus: status,
			workload.AnnotationMemoryQoS: memQoS, workload.LegacyQoSClass: class, workload.AnnotationCPUScope: policy,
			workload.AnnotationContainerCPUSets: status},
			map[string]string{workload.LabelQoSClass: class, workload.AnnotationCPUSet: optIn}, "",
			ctr{name: "a", req: "memory=1Gi", running: true, id: containerID})
		if q, ok := fuzzseed.ParseQuantity(limit); ok {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: q, corev1.ResourceMemory: q}
		}
		// Signed, so that the decision's text is read, not only refused.
		signed(t, p)
		fuzzseed.Timed(t, "FromPod, ScheduledCPUs and ParseCPURequest", func() {
			w, err := FromPod(p, Env{Driver: env().Driver, Exists: func(string) bool { return true }, Topology: top, Trust: env().Trust})
			if err != nil {
				t.Fatalf("FromPod: %v (only the UID and QoS class, both valid here, can fail it)", err)
			}
			for _, c := range w.Plan.Containers {
				if !strings.HasPrefix(c.Cgroup, w.Plan.Cgroup+"/") || cgroup.CheckRel(c.Cgroup) != nil {
					t.Fatalf("container cgroup %q outside the pod's %q", c.Cgroup, w.Plan.Cgroup)
				}
			}
			for _, pr := range w.Problems {
				if len(pr.Message) > fuzzseed.MaxErrorLen {
					t.Fatalf("problem %s of %d bytes: %.200s", pr.Reason, len(pr.Message), pr.Message)
				}
			}
			// More CPUs than the machine has is the allocator's to refuse.
			if need := w.Plan.CPU; need.Exclusive && need.CPUs < 1 && need.Decided.IsEmpty() {
				t.Fatalf("exclusive need of %d CPUs", need.CPUs)
			}
			a, ok, err := workload.ScheduledCPUs(p)
			checkError(t, err)
			if ok && a.CPUs.Size() > topology.MaxCPUID+1 {
				t.Fatalf("decision of %d CPUs", a.CPUs.Size())
			}
			req, err := workload.ParseCPURequest(p)
			checkError(t, err, workload.AnnotationCPUSet, workload.AnnotationCPUPolicy, workload.AnnotationCPUScope)
			if err == nil && (req.CPUs < 1 || req.RequestMilli < 0) {
				t.Fatalf("accepted request %+v", req)
			}
			// The scheduler and the agent divide by the same counts.
			if err == nil && workload.OptedIn(p) && !slices.Equal(req.Containers, w.Plan.CPU.Containers) {
				t.Fatalf("the scheduler reads containers %+v, the agent %+v", req.Containers, w.Plan.CPU.Containers)
			}
		})
	})
}

func checkError(t *testing.T, err error, fields ...string) {
	t.Helper()
	fuzzseed.CheckError(t, err, fields...)
}
