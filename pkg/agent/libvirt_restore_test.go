package agent

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
)

// Every thread of a domain gets the domain's CPUs, and the workload
// removed from the HostConfig, the threads' files are given back their
// values as the scope's are.
func TestLibvirtThreadsRestored(t *testing.T) {
	const scope = `machine.slice/machine-qemu\x2d3\x2dweb\x2dfront.scope`
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		tree := newCgroupTree(t, v, false, "0-3")
		tree.mkcg(scope+"/libvirt/emulator", scope+"/libvirt/vcpu0", scope+"/libvirt/vcpu1")
		before := tree.snapshot()
		h := newHarness(t, tree, libvirtConfig, nil)
		h.reconcile()
		held := h.checkpoint().Assignments["web"].CPUs.String()
		for _, rel := range []string{"", "/libvirt", "/libvirt/emulator", "/libvirt/vcpu0", "/libvirt/vcpu1"} {
			if got := tree.file(scope+rel, "cpuset.cpus"); got != held || held == "0-3" {
				t.Errorf("v%d: %s cpuset.cpus %q, want the domain's %s", v, rel, got, held)
			}
		}
		h.writeConfig(strings.Split(libvirtConfig, "workloads:")[0] + "workloads: []\n")
		h.reconcile()
		after := tree.snapshot()
		for f, was := range before {
			if after[f] != was {
				t.Errorf("v%d: removed, %s holds %q, was %q", v, f, after[f], was)
			}
		}
	}
}
