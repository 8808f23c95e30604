package agent

import (
	"testing"

	"github.com/locus-project/locus/internal/nritest"
	"github.com/locus-project/locus/pkg/cgroup"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

// scopedPod is pod(name, 3) with container scope: a sidecar "log" of 1 CPU
// and the app container "app" of 2, not running yet when created is set.
func scopedPod(name string, created bool) source.Workload {
	w := pod(name, 3)
	w.Plan.CPU.Containers = []cpualloc.ContainerCPUs{{Name: "log", Kind: cpualloc.Sidecar, CPUs: 1},
		{Name: "app", Kind: cpualloc.App, CPUs: 2}}
	w.Plan.Containers = nil
	if created {
		w.Plan.Containers = []workload.Container{{Name: "log", Cgroup: w.Plan.Cgroup + "/log"},
			{Name: "app", Cgroup: w.Plan.Cgroup + "/app"}}
	}
	return w
}

// A container-scope pod's containers are created, through NRI, each on its
// own part of the pod's CPUs, and the reconcile loop then writes the same
// parts into their cgroups (small-1s-4c, CPU 0 reserved: the pod holds
// 1-3, the sidecar 1 and the app 2-3).
func TestContainerScopeParts(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			n := newNRINode(t, v, NRIOptions{}, scopedPod("a", false))
			rt := nritest.New(t, n.sock, nil, nil)
			rt.Start(t)
			n.pinning(t, status.PinAtCreation)
			rt.WaitRegistered(t, 1)
			want := map[string]string{"log": "1", "app": "2-3"}
			for _, c := range []string{"log", "app"} {
				r, err := rt.Create(sandbox("a"), container("a", c))
				if err != nil {
					t.Fatal(err)
				}
				if got := r.GetAdjust().GetLinux().GetResources().GetCpu().GetCpus(); got != want[c] {
					t.Errorf("%s created with cpuset.cpus %q, want %q", c, got, want[c])
				}
			}
			n.tree.mkcg("kubepods/pod-a/log", "kubepods/pod-a/app")
			n.src.mu.Lock()
			n.src.snap.Workloads = []source.Workload{scopedPod("a", true)}
			n.src.mu.Unlock()
			n.a.wake(0)
			waitFor(t, func() bool {
				return n.tree.file("kubepods/pod-a/log", "cpuset.cpus") == want["log"] &&
					n.tree.file("kubepods/pod-a/app", "cpuset.cpus") == want["app"]
			})
			if got := n.a.pub.Current().Workloads; len(got) != 1 || got[0].CPUs != "1-3" {
				t.Errorf("status %+v, want the pod holding 1-3", got)
			}
		})
	}
}

// Without container scope the same containers share the pod's CPUs.
func TestPodScopeShares(t *testing.T) {
	w := scopedPod("a", true)
	w.Plan.CPU.Containers = nil
	n := newNRINode(t, cgroup.V2, NRIOptions{}, w)
	n.a.wake(0)
	waitFor(t, func() bool {
		return n.tree.file("kubepods/pod-a/log", "cpuset.cpus") == "1-3" &&
			n.tree.file("kubepods/pod-a/app", "cpuset.cpus") == "1-3"
	})
}
