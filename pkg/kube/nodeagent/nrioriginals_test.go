package nodeagent_test

import (
	"path"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
)

// A container the runtime created with its pod's CPUs (NRI) holds Locus's
// value from its first instruction and is never written: its recorded
// original is still its pod's, on disk after the next reconcile, so that
// undoing Locus (the chart's uninstall) gives it its pod's CPUs back
// instead of leaving it pinned.
func TestNRICreatedContainerKeepsItsPodsOriginal(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			n := newNode(t, v, false)
			rt := n.startNRI(&watchGate{})
			pod, sb := n.pending(decidedPod("nri", `{"cpuset": "12-13", "numaNodes": [1]}`, "2"))
			cpus, mems := created(t, rt, sb, "app")
			if cpus != "12-13" || mems != "1" {
				t.Fatalf("created with cpuset.cpus %q mems %q, want 12-13 on node 1", cpus, mems)
			}
			// The runtime makes the container's cgroup with the values it
			// was given, then the kubelet reports the pod running.
			k, cg := n.kubelet, n.kubelet.ContainerCgroup(pod, "app")
			k.mkcgHolding(cg, map[string]string{"cpuset.cpus": cpus, "cpuset.mems": mems})
			k.Run(callCtx(t), pod)

			// The pod's original: recorded if Locus wrote the pod's cgroup,
			// else what it holds.
			key := func(rel string) string { return path.Join(k.knobDir("cpuset.cpus"), rel, "cpuset.cpus") }
			var got map[string]string
			for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				got = n.originals()
				if _, ok := got[key(cg)]; ok || time.Now().After(deadline) {
					break
				}
			}
			podOrig, ok := got[key(k.PodCgroup(pod))]
			if !ok {
				podOrig = k.File(k.PodCgroup(pod), "cpuset.cpus")
			}
			if c, ok := got[key(cg)]; !ok || c != podOrig || c == cpus {
				t.Errorf("the container's original cpuset.cpus on disk: %q %v, want its pod's %q", c, ok, podOrig)
			}
		})
	}
}
