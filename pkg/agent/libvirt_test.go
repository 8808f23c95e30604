package agent

import (
	"os"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
)

const libvirtConfig = `apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
workloads:
- name: web
  match: {libvirtDomain: web-front}
  qosClass: LS
  resources: {limits: {cpu: "2"}}
  annotations: {cpuset-scheduler: "true"}
`

// A libvirt domain named in the HostConfig gets its CPUs in the scope it
// runs in, on a fixture tree; restarted (a new id, a new scope), it follows
// it; stopped, it is a problem and nothing is written. Nothing is created
// under machine.slice.
func TestLibvirtDomainWorkload(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		tree := newCgroupTree(t, v, false, "0-3")
		scope := func(id string) string { return `machine.slice/machine-qemu\x2d` + id + `\x2dweb\x2dfront.scope` }
		domain := func(id string) {
			tree.mkcg(scope(id)+"/libvirt/vcpu0", scope(id)+"/libvirt/vcpu1", scope(id)+"/libvirt/emulator")
		}
		stop := func(id string) {
			for _, c := range tree.controllers() {
				if err := os.RemoveAll(tree.dir(c, scope(id))); err != nil {
					t.Fatal(err)
				}
			}
		}
		domain("3")
		h := newHarness(t, tree, libvirtConfig, nil)
		res := h.reconcile()
		if got := tree.get(tree.knobDir("cpuset.cpus"), scope("3"), "cpuset.cpus"); len(res.Problems) != 0 || strings.Count(got, ",")+strings.Count(got, "-") != 1 {
			t.Fatalf("v%d: scope 3's cpuset.cpus %q (problems %v), want two CPUs of its own", v, got, res.Problems)
		}
		for _, child := range []string{"/libvirt", "/libvirt/vcpu0", "/libvirt/vcpu1", "/libvirt/emulator"} {
			if c := tree.get(tree.knobDir("cpuset.cpus"), scope("3")+child, "cpuset.cpus"); c != tree.get(tree.knobDir("cpuset.cpus"), scope("3"), "cpuset.cpus") {
				t.Errorf("v%d: %s cpuset.cpus %q, want the scope's", v, child, c)
			}
		}
		stop("3")
		domain("4")
		h.reconcile()
		res = h.reconcile()
		if got := tree.get(tree.knobDir("cpuset.cpus"), scope("4"), "cpuset.cpus"); len(res.Problems) != 0 || got == "0-3" {
			t.Errorf("v%d: restarted, scope 4's cpuset.cpus %q (problems %v), want its two CPUs", v, got, res.Problems)
		}
		if ck := h.checkpoint(); ck.Workloads["web"].Cgroup != scope("4") {
			t.Errorf("v%d: checkpoint %+v, want the new scope", v, ck.Workloads["web"])
		}
		stop("4")
		res = h.reconcile()
		if len(res.Problems) != 1 || res.Problems[0].Reason != "LibvirtDomainNotFound" ||
			!strings.Contains(res.Problems[0].Message, `libvirt domain "web-front" is not running`) {
			t.Errorf("v%d: stopped: problems %+v", v, res.Problems)
		}
		ents, err := os.ReadDir(tree.dir(tree.knobDir("cpuset.cpus"), "machine.slice"))
		if err != nil || len(ents) != len(fixtureFiles(v)) {
			t.Errorf("v%d: machine.slice holds %d entries (%v), want only its own files", v, len(ents), err)
		}
	}
}

// fixtureFiles are the files the fixture tree puts in every cgroup.
func fixtureFiles(v cgroup.Version) map[string]string {
	if v == cgroup.V2 {
		return fixtureV2
	}
	return fixtureV1["cpuset"]
}
