package nodeagent_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/podcgroup"
)

// TestPodsUnderKubeletCgroupRoot: a kubelet with cgroupRoot /kubelet (kind's)
// keeps its kubepods tree one level below the cgroup root. Given the root,
// the agent finds the pods there and binds them, memory QoS included.
func TestPodsUnderKubeletCgroupRoot(t *testing.T) {
	n := newNode(t, cgroup.V2, false)
	// The fake kubelet's tree moves to top/kubelet; top gets the root
	// cgroup's own files, as the kernel's root has them.
	top := t.TempDir()
	ents, err := os.ReadDir(n.kubelet.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Type().IsRegular() {
			raw, err := os.ReadFile(filepath.Join(n.kubelet.root, e.Name()))
			if err == nil {
				err = os.WriteFile(filepath.Join(top, e.Name()), raw, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Rename(n.kubelet.root, filepath.Join(top, "kubelet")); err != nil {
		t.Fatal(err)
	}
	n.kubelet.root = filepath.Join(top, "kubelet")
	if _, err := os.Stat(filepath.Join(top, "kubepods")); err == nil {
		t.Fatal("kubepods left at the top: the test would not tell")
	}

	pod := n.create(boundPod("under-root"))
	n.start(func(o *kubeOptions) {
		o.Agent.CgroupRoot = top
		o.Source.KubeletCgroupRoot = podcgroup.Root{"kubelet"}
	})
	cg := n.kubelet.ContainerCgroup(pod, "web")
	n.waitFileMatch(cg, "cpuset.cpus", "2 CPUs", func(s string) bool { c, err := cpuset.Parse(s); return err == nil && c.Size() == 2 })
	n.waitFile(cg, "memory.low", "1073741824")
	if c := n.checkpoint(); len(c.Workloads) != 1 {
		t.Fatalf("checkpoint %+v", c)
	}
	for _, w := range n.checkpoint().Workloads {
		if want := "kubelet/" + n.kubelet.PodCgroup(pod); w.Cgroup != want {
			t.Errorf("workload cgroup %q, want %q", w.Cgroup, want)
		}
	}
}
