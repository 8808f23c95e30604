package agent

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// smt2TwoNodes is two nodes of four two-thread cores: core c is CPUs c and
// c+8, node 0 holds cores 0-3.
var smt2TwoNodes = fixture.Shape{Name: "2s-4c-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
	CoresPerSocket: 4, ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 16 << 30}

const dedicatedConfig = `apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
workloads:
- name: vm
  match: {libvirtDomain: db-1}
  qosClass: LS
  cpuPolicy: dedicated
  resources: {limits: {cpu: "8"}}
  annotations: {cpuset-scheduler: "true"}
`

// A libvirt domain of four vCPUs under cpuPolicy dedicated, holding eight
// CPUs of a two-node SMT-2 machine: after a reconcile each vcpuN's cpuset
// is one whole core of the domain's, no two alike, the emulator's the
// shared pool, and every mems the domain's node; the workload removed,
// every file is as it was.
func TestLibvirtDedicatedVCPUs(t *testing.T) {
	const scope = `machine.slice/machine-qemu\x2d7\x2ddb\x2d1.scope`
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		tree := newCgroupTree(t, v, false, "0-15")
		for _, c := range tree.controllers() {
			tree.set(c, "", "cpuset.mems", "0-1")
		}
		threads := []string{scope + "/libvirt/emulator"}
		for i := range 4 {
			threads = append(threads, fmt.Sprintf("%s/libvirt/vcpu%d", scope, i))
		}
		tree.mkcg(threads...)
		before := tree.snapshot()
		h := newHarness(t, tree, dedicatedConfig, func(o *Options) { o.SysfsRoot = sysfs(t, smt2TwoNodes) })
		if res := h.reconcile(); len(res.Problems) != 0 {
			t.Fatalf("v%d: problems %v", v, res.Problems)
		}
		held := h.checkpoint().Assignments["vm"].CPUs
		cpus := func(rel string) string { return tree.file(rel, "cpuset.cpus") }
		seen := cpuset.New()
		for i := range 4 {
			rel := fmt.Sprintf("%s/libvirt/vcpu%d", scope, i)
			set, err := cpuset.Parse(cpus(rel))
			l := set.List()
			if err != nil || len(l) != 2 || l[1] != l[0]+8 || !set.IsSubsetOf(held) || !seen.Intersection(set).IsEmpty() {
				t.Errorf("v%d: vcpu%d cpuset.cpus %q, want a whole core of the domain's %s of its own", v, i, cpus(rel), held)
			}
			seen = seen.Union(set)
			if m := tree.file(rel, "cpuset.mems"); m != "0" && m != "1" {
				t.Errorf("v%d: vcpu%d cpuset.mems %q, want the domain's node", v, i, m)
			}
		}
		shared := cpuset.New(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15).Difference(held).String()
		if got := cpus(scope + "/libvirt/emulator"); held.Size() != 8 || got != shared {
			t.Errorf("v%d: emulator cpuset.cpus %q, want the shared pool %s (the vCPUs hold all of %s)", v, got, shared, held)
		}
		for _, rel := range []string{scope, scope + "/libvirt"} {
			if got := cpus(rel); got != "0-15" {
				t.Errorf("v%d: %s cpuset.cpus %q, want the domain's CPUs and the emulator's pool", v, rel, got)
			}
		}
		h.writeConfig(strings.Split(dedicatedConfig, "workloads:")[0] + "workloads: []\n")
		h.reconcile()
		after := tree.snapshot()
		for f, was := range before {
			if after[f] != was {
				t.Errorf("v%d: removed, %s holds %q, was %q", v, f, after[f], was)
			}
		}
	}
}
