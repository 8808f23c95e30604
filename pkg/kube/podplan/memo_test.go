package podplan

import (
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/decisionsig"
	"github.com/locus-project/locus/pkg/kube/podcgroup"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// The memo maps a pod again when anything the mapping depends on changed:
// its version, a cgroup it looked for, the driver, the topology. Each case
// changes the pod's text without changing its version as well, so a stale
// entry shows as the old class.
func TestMemoMapsAgainWhatChanged(t *testing.T) {
	const ctrCg = podB + "/" + id1
	newPod := func() *corev1.Pod {
		p := pod(nil, map[string]string{}, corev1.PodQOSBurstable,
			ctr{name: "app", id: "containerd://" + id1, running: true})
		p.ResourceVersion = "1"
		return p
	}
	present := map[string]bool{podB: true}
	e := env()
	e.Exists = func(rel string) bool { return present[rel] }
	var m Memo
	mapped := func(p *corev1.Pod, e Env) Workload {
		t.Helper()
		w, err := m.FromPod(p, e)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	p := newPod()
	if w := mapped(p, e); w.Class != "Burstable" || len(w.Plan.Containers) != 0 || reasons(w) != "ContainerCgroupNotFound" {
		t.Fatalf("first mapping: class %q containers %v problems %v", w.Class, w.Plan.Containers, w.Problems)
	}

	// Same version, nothing else changed: the entry is used (the class
	// label added behind the version's back does not show).
	p.Labels["koordinator.sh/qosClass"] = "LS"
	if w := mapped(p, e); w.Class != "Burstable" {
		t.Fatalf("same version: class %q, want the remembered Burstable", w.Class)
	}
	// A new version is mapped anew.
	p.ResourceVersion = "2"
	if w := mapped(p, e); w.Class != "LS" {
		t.Fatalf("new version: class %q, want LS", w.Class)
	}
	// The container's cgroup appears before the pod changes: mapped anew.
	p.Labels["koordinator.sh/qosClass"] = "BE"
	present[ctrCg] = true
	if w := mapped(p, e); w.Class != "BE" || len(w.Plan.Containers) != 1 || reasons(w) != "" {
		t.Fatalf("container cgroup appeared: class %q containers %v problems %v", w.Class, w.Plan.Containers, w.Problems)
	}
	// ... and goes again.
	p.Labels["koordinator.sh/qosClass"] = "LS"
	delete(present, ctrCg)
	if w := mapped(p, e); w.Class != "LS" || len(w.Plan.Containers) != 0 {
		t.Fatalf("container cgroup gone: class %q containers %v", w.Class, w.Plan.Containers)
	}
	// Another topology (the machine changed) is mapped anew.
	p.Labels["koordinator.sh/qosClass"] = "BE"
	e2 := e
	e2.Topology = fixture.MustBuild(fixture.MemoryOnly)
	if w := mapped(p, e2); w.Class != "BE" {
		t.Fatalf("new topology: class %q, want BE", w.Class)
	}
	// Another driver: here the pod's cgroup is not found under it.
	e3 := e2
	e3.Driver = podcgroup.Systemd
	if _, err := m.FromPod(p, e3); err == nil {
		t.Fatal("new driver: the remembered mapping was used")
	}
	// The pod's cgroup goes: the error, not the remembered workload.
	delete(present, podB)
	if _, err := m.FromPod(p, e2); err == nil {
		t.Fatal("pod cgroup gone: the remembered mapping was used")
	}
}

// A pod without a resourceVersion is mapped every time, and the workloads
// handed out are the caller's to change.
func TestMemoUnversionedAndCopies(t *testing.T) {
	const ctrCg = podB + "/" + id1
	p := pod(nil, map[string]string{}, corev1.PodQOSBurstable, ctr{name: "app", id: "containerd://" + id1, running: true})
	e := env(podB, ctrCg)
	var m Memo
	if _, err := m.FromPod(p, e); err != nil {
		t.Fatal(err)
	}
	p.Labels["koordinator.sh/qosClass"] = "LS"
	if w, _ := m.FromPod(p, e); w.Class != "LS" || m.Len() != 0 {
		t.Fatalf("unversioned pod: class %q, %d remembered; want LS, none", w.Class, m.Len())
	}
	p.ResourceVersion = "7"
	w, _ := m.FromPod(p, e)
	w.Plan.Containers[0].Cgroup = "changed/by/the/caller"
	if w, _ := m.FromPod(p, e); w.Plan.Containers[0].Cgroup != ctrCg {
		t.Fatalf("remembered container cgroup %q, changed through a workload handed out", w.Plan.Containers[0].Cgroup)
	}
}

// Sweep forgets the pods not mapped since the sweep before.
func TestMemoSweep(t *testing.T) {
	p := pod(nil, nil, corev1.PodQOSBurstable)
	p.ResourceVersion = "1"
	e := env(podB)
	var m Memo
	m.FromPod(p, e)
	m.Sweep()
	if m.Len() != 1 {
		t.Fatalf("mapped in the pass: %d remembered, want 1", m.Len())
	}
	m.Sweep() // a pass without the pod: it left the node
	if m.Len() != 0 {
		t.Fatalf("gone: %d remembered, want 0", m.Len())
	}
}

// A key file read anew (a key rotated or removed) maps every pod anew: a
// decision signed only with a key no longer held stops being believed at
// once, not when its pod next changes.
func TestMemoMapsAgainOnNewKeys(t *testing.T) {
	p := signed(t, pod(map[string]string{"cpuset-scheduler": "true", "locus.io/resource-status": `{"cpuset":"2-3"}`},
		nil, corev1.PodQOSGuaranteed, ctr{name: "a", lim: "cpu=2"}))
	p.ResourceVersion = "1"
	e := env("kubepods/pod" + uid)
	var m Memo
	if w, err := m.FromPod(p, e); err != nil || w.Plan.CPU.Decided.String() != "2-3" {
		t.Fatalf("signed: %+v, %v", w.Plan.CPU, err)
	}
	other, err := decisionsig.ParseKeys([]byte("other " + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("b", 32)))))
	if err != nil {
		t.Fatal(err)
	}
	e.Trust.Keys = other
	if w, _ := m.FromPod(p, e); !w.Plan.CPU.Decided.IsEmpty() || reasons(w) != "UntrustedResourceStatus" {
		t.Fatalf("after the key changed: %+v, problems %v", w.Plan.CPU, w.Problems)
	}
}
