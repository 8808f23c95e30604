package libvirt

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// domainXML is the smallest domain that runs under TCG in the guest: no
// disk, no network, no display, 32 MiB; SeaBIOS finds nothing to boot and
// waits, which is running as far as libvirt and the cgroups are concerned.
// Its vCPUs and memory are placed by numad (placement='auto').
const domainXML = `<domain type='qemu'>
  <name>%s</name>
  <memory unit='MiB'>32</memory>
  <vcpu placement='auto'>%d</vcpu>
  <numatune><memory mode='strict' placement='auto'/></numatune>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
    <video><model type='none'/></video>
  </devices>
</domain>
`

// numadAnswer is what libvirt kept of numad's answer in the domain's live
// status: the nodeset numad printed and the CPUs of those nodes.
var numadAnswer = regexp.MustCompile(`<numad nodeset='([^']*)'(?: cpuset='([^']*)')?`)

// domain is a running domain and where its cgroups are.
type domain struct {
	name    string
	cgroup  string // its own cgroup, under the cgroup root
	threads string // the cgroup holding vcpuN and emulator
	vcpus   int
}

// createDomain starts a transient domain with vcpus vCPUs and finds its
// cgroups in either of libvirt's layouts.
func createDomain(t *testing.T, name string, vcpus int) *domain {
	t.Helper()
	xml := filepath.Join(t.TempDir(), name+".xml")
	write(t, xml, fmt.Sprintf(domainXML, name, vcpus))
	stop := watch(t, "virsh create "+name)
	virsh(t, startBound, "create", xml)
	stop()
	d := &domain{name: name, vcpus: vcpus}
	t.Cleanup(func() { _, _ = virshOut(time.Minute, "destroy", name) })
	id, err := strconv.Atoi(strings.TrimSpace(virsh(t, time.Minute, "domid", name)))
	if err != nil {
		t.Fatalf("virsh domid %s: %v", name, err)
	}
	machine := workload.LibvirtMachineName(id, name)
	for _, l := range []struct{ cgroup, threads string }{
		{filepath.Join(workload.LibvirtSlice, `machine-`+strings.ReplaceAll(machine, "-", `\x2d`)+`.scope`), workload.LibvirtSubtree},
		{filepath.Join("machine", machine+".libvirt-qemu"), ""},
	} {
		if _, err := os.Stat(filepath.Join(cgroupRoot, l.cgroup)); err == nil {
			d.cgroup, d.threads = l.cgroup, filepath.Join(l.cgroup, l.threads)
		}
	}
	if d.cgroup == "" {
		t.Fatalf("domain %s (machine %s) has no cgroup under %s:\n%s", name, machine, cgroupRoot, tree(cgroupRoot, 3))
	}
	t.Logf("domain %s's cgroups:\n%s", name, tree(filepath.Join(cgroupRoot, d.cgroup), 2))
	return d
}

// numad is the nodeset and CPUs libvirt got from numad for the domain.
func (d *domain) numad(t *testing.T) (nodes, cpus cpuset.CPUSet) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/run/libvirt/qemu", d.name+".xml"))
	if err != nil {
		t.Fatal(err)
	}
	m := numadAnswer.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("the domain's status has no numad answer:\n%s", tail(string(b), 40))
	}
	return parse(t, "numad nodeset", m[1]), parse(t, "numad cpuset", m[2])
}

// threadCgroups are the cgroups of the domain's threads: vcpu0.. then
// emulator.
func (d *domain) threadCgroups() []string {
	var out []string
	for i := 0; i < d.vcpus; i++ {
		out = append(out, filepath.Join(d.threads, "vcpu"+strconv.Itoa(i)))
	}
	return append(out, filepath.Join(d.threads, workload.LibvirtEmulator))
}

// cpusets reads cpuset.cpus and cpuset.mems of each cgroup.
func cpusets(t *testing.T, cgs []string) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	for _, cg := range cgs {
		out[cg] = [2]string{knob(t, cg, "cpuset.cpus"), knob(t, cg, "cpuset.mems")}
	}
	return out
}

func knob(t *testing.T, cg, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cgroupRoot, cg, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func parse(t *testing.T, what, list string) cpuset.CPUSet {
	t.Helper()
	s, err := topology.ParseCPUList(list)
	if err != nil {
		t.Fatalf("%s %q: %v", what, list, err)
	}
	return s
}

// tree lists the directories under dir, depth levels down, for the log.
func tree(dir string, depth int) string {
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.Count(rel, "/") >= depth {
			return filepath.SkipDir
		}
		fmt.Fprintf(&b, "  %s\n", rel)
		return nil
	})
	return b.String()
}
