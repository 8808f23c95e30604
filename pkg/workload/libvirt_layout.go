package workload

import (
	"fmt"
	"path"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// Without systemd's machined (a host booted by another init, or one whose
// D-Bus is down), libvirt makes a domain's cgroup itself, in its "machine"
// partition: machine/qemu-<id>-<name>.libvirt-qemu, with the threads'
// cgroups (vcpuN, emulator, iothreadN) right below it, on cgroup v1 and v2.
const (
	// LibvirtPartition is the partition libvirt makes without machined.
	LibvirtPartition = "machine"
	groupSuffix      = ".libvirt-qemu"
)

// LibvirtLayout is one way libvirt lays a domain's cgroups out: the cgroup
// its domains' cgroups are in, how such a cgroup is named, and which of
// its children holds the threads' cgroups ("" for the domain's own).
type LibvirtLayout struct {
	Parent  string
	Threads string
	parse   func(dir string) (LibvirtMachine, error)
}

// LibvirtLayouts are systemd's (a scope under machine.slice, the threads
// in its libvirt sub-tree) and libvirt's own, tried in that order.
var LibvirtLayouts = []LibvirtLayout{
	{Parent: LibvirtSlice, Threads: LibvirtSubtree, parse: ParseLibvirtScope},
	{Parent: LibvirtPartition, parse: ParseLibvirtGroup},
}

// Parse reads the name of a directory in the layout's parent as a QEMU
// domain's cgroup.
func (l LibvirtLayout) Parse(dir string) (LibvirtMachine, error) { return l.parse(dir) }

// ThreadsOf is the cgroup holding the threads' cgroups of the domain whose
// cgroup is domain.
func (l LibvirtLayout) ThreadsOf(domain string) string { return path.Join(domain, l.Threads) }

// ParseLibvirtGroup reads the name of a directory under libvirt's machine
// partition as a QEMU domain's cgroup, qemu-<id>-<name>.libvirt-qemu. A
// name that is not one is an error naming it.
func ParseLibvirtGroup(dir string) (LibvirtMachine, error) {
	bad := func(why string) (LibvirtMachine, error) {
		return LibvirtMachine{}, fmt.Errorf("%s is not a libvirt QEMU domain's cgroup: %s", topology.Quote(dir), why)
	}
	if len(dir) > maxUnitName {
		return bad(fmt.Sprintf("%d bytes, longer than a machine's cgroup name (%d)", len(dir), maxUnitName))
	}
	machine, ok := strings.CutSuffix(dir, groupSuffix)
	if !ok {
		return bad("want qemu-<id>-<domain>" + groupSuffix)
	}
	m, why := parseMachine(machine)
	if why != "" {
		return bad(why)
	}
	return m, nil
}
