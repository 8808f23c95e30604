package workload

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// libvirt puts each QEMU domain in a systemd scope under machine.slice:
// machine.slice/machine-qemu\x2d<id>\x2d<name>.scope, the unit name of the
// machine "qemu-<id>-<name>" escaped as systemd escapes unit names. Below it
// (cgroup v1 and v2 alike) its own sub-tree "libvirt" holds a cgroup per vCPU
// thread (vcpu0, vcpu1, ...), one for the emulator threads (emulator) and
// one per I/O thread (iothread1, ...).
const (
	// LibvirtSlice is the slice libvirt's system instance puts domains in.
	LibvirtSlice = "machine.slice"
	// LibvirtSubtree is the scope's child that holds the threads' cgroups.
	LibvirtSubtree = "libvirt"
	// LibvirtEmulator is the emulator threads' cgroup in LibvirtSubtree.
	LibvirtEmulator = "emulator"

	scopePrefix = "machine-"
	scopeSuffix = ".scope"
	// maxUnitName is systemd's bound on a unit name (UNIT_NAME_MAX less
	// its NUL): no scope directory is longer.
	maxUnitName = 255
	// maxMachineName is libvirt's bound on the machine name it builds.
	maxMachineName = 64
	// MaxLibvirtVCPUs bounds the vCPUs read from a domain's cgroups, with
	// room above QEMU's largest machines.
	MaxLibvirtVCPUs = 16384
	// maxLibvirtChildren bounds the entries of a domain's libvirt sub-tree
	// read at all: its vCPUs, the emulator and I/O threads.
	maxLibvirtChildren = 2*MaxLibvirtVCPUs + 16
)

// LibvirtMachine is a libvirt domain as its scope's name tells it.
type LibvirtMachine struct {
	Driver string // "qemu"
	ID     int    // the domain's id while it runs
	// Name is the domain's name as libvirt kept it in the machine name:
	// letters, digits and single '-' or '.', at most 64 bytes with the
	// driver and id (LibvirtMachineName).
	Name string
}

// ParseLibvirtScope reads the name of a directory under machine.slice as
// libvirt's scope of a QEMU domain. A name that is not one (another
// machine's scope, a slice, anything hostile) is an error naming it.
func ParseLibvirtScope(dir string) (LibvirtMachine, error) {
	bad := func(why string) (LibvirtMachine, error) {
		return LibvirtMachine{}, fmt.Errorf("%s is not a libvirt QEMU domain's scope: %s", topology.Quote(dir), why)
	}
	if len(dir) > maxUnitName {
		return bad(fmt.Sprintf("%d bytes, longer than a unit name (%d)", len(dir), maxUnitName))
	}
	escaped, ok := strings.CutPrefix(dir, scopePrefix)
	if ok {
		escaped, ok = strings.CutSuffix(escaped, scopeSuffix)
	}
	if !ok {
		return bad("want machine-<name>.scope")
	}
	machine, err := unescapeUnit(escaped)
	if err != nil {
		return bad(err.Error())
	}
	m, why := parseMachine(machine)
	if why != "" {
		return bad(why)
	}
	return m, nil
}

// parseMachine reads the machine name libvirt makes of a QEMU domain,
// qemu-<id>-<domain>, or says why it is not one.
func parseMachine(machine string) (LibvirtMachine, string) {
	driver, rest, ok := strings.Cut(machine, "-")
	if !ok || driver != "qemu" {
		return LibvirtMachine{}, "want the machine name qemu-<id>-<domain>"
	}
	idText, name, ok := strings.Cut(rest, "-")
	id, err := strconv.Atoi(idText)
	if !ok || err != nil || id < 0 || idText != strconv.Itoa(id) || name == "" {
		return LibvirtMachine{}, "want the machine name qemu-<id>-<domain>"
	}
	if len(machine) > maxMachineName || !validMachineName(name) {
		return LibvirtMachine{}, "the domain part is not a name libvirt makes"
	}
	return LibvirtMachine{Driver: driver, ID: id, Name: name}, ""
}

// unescapeUnit undoes systemd's escaping of a unit name: "\xNN" is the byte
// NN; a bare '-' stands for '/', which no machine name holds.
func unescapeUnit(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			if i+3 >= len(s) || s[i+1] != 'x' {
				return "", fmt.Errorf("a '\\' at byte %d not followed by xNN", i)
			}
			v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err != nil {
				return "", fmt.Errorf("%q at byte %d is not an escape", s[i:i+4], i)
			}
			b.WriteByte(byte(v))
			i += 3
		case c == '-':
			return "", fmt.Errorf("a bare '-' at byte %d (a path separator in a unit name)", i)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// validMachineName reports whether name could be what libvirt kept of a
// domain's name: hostname characters, '-' and '.' never first, last or
// twice in a row.
func validMachineName(name string) bool {
	prevSep := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		sep := c == '-' || c == '.'
		if (sep && prevSep) || (!sep && !isHostnameChar(c)) {
			return false
		}
		prevSep = sep
	}
	return !prevSep
}

func isHostnameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

// LibvirtMachineName is the machine name libvirt's system instance gives
// the QEMU domain named domain while it runs with id: "qemu-<id>-" and what
// it keeps of the name (hostname characters; a '.' or '-' only after one of
// them, and none at the end), the whole at most 64 bytes.
func LibvirtMachineName(id int, domain string) string {
	b := []byte("qemu-" + strconv.Itoa(id) + "-")
	skip := true
	for i := 0; i < len(domain) && len(b) < maxMachineName; i++ {
		c := domain[i]
		if c == '.' || c == '-' {
			if !skip {
				b = append(b, c)
				skip = true
			}
			continue
		}
		if !isHostnameChar(c) {
			continue
		}
		b = append(b, c)
		skip = false
	}
	return strings.TrimRight(string(b), "-.")
}

// Is reports whether the machine is the domain named domain: libvirt made
// its machine name from that name.
func (m LibvirtMachine) Is(domain string) bool {
	return LibvirtMachineName(m.ID, domain) == fmt.Sprintf("%s-%d-%s", m.Driver, m.ID, m.Name)
}

// LibvirtThreads are the cgroups libvirt made for a domain's threads, in its
// libvirt sub-tree.
type LibvirtThreads struct {
	VCPUs    []int // vcpuN, sorted
	Emulator bool
}

// ParseLibvirtThreads reads the names of the entries of a domain's libvirt
// sub-tree. A tree without its emulator's cgroup or any vCPU's is missing
// parts (a domain starting or stopping, or not libvirt's): an error naming
// what is missing.
func ParseLibvirtThreads(names []string) (LibvirtThreads, error) {
	if len(names) > maxLibvirtChildren {
		return LibvirtThreads{}, fmt.Errorf("%d entries in the domain's %s sub-tree, more than %d", len(names), LibvirtSubtree, maxLibvirtChildren)
	}
	var t LibvirtThreads
	for _, n := range names {
		if n == LibvirtEmulator {
			t.Emulator = true
			continue
		}
		num, ok := strings.CutPrefix(n, "vcpu")
		if !ok {
			continue // iothreadN, and what a newer libvirt adds
		}
		v, err := strconv.Atoi(num)
		if err != nil || v < 0 || v >= MaxLibvirtVCPUs || num != strconv.Itoa(v) {
			return LibvirtThreads{}, fmt.Errorf("%s: not a vCPU's cgroup (vcpu0 to vcpu%d)", topology.Quote(n), MaxLibvirtVCPUs-1)
		}
		t.VCPUs = append(t.VCPUs, v)
	}
	slices.Sort(t.VCPUs)
	t.VCPUs = slices.Compact(t.VCPUs)
	switch {
	case !t.Emulator && len(t.VCPUs) == 0:
		return t, fmt.Errorf("the domain's %s sub-tree has neither %s nor vcpuN cgroups", LibvirtSubtree, LibvirtEmulator)
	case !t.Emulator:
		return t, fmt.Errorf("the domain's %s sub-tree has no %s cgroup", LibvirtSubtree, LibvirtEmulator)
	case len(t.VCPUs) == 0:
		return t, fmt.Errorf("the domain's %s sub-tree has no vcpuN cgroup", LibvirtSubtree)
	}
	return t, nil
}
