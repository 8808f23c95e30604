package hostconfig

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Match selects running processes to adopt into a workload's cgroup. Comm
// and Cmdline say which program it is, but any local user chooses both when
// starting a process, so a match must also say whose processes may be
// adopted: UID, GID, Exe or Unit (all given ones must hold).
type Match struct {
	// Comm is a shell pattern on /proc/PID/comm.
	Comm string `json:"comm,omitempty"`
	// Cmdline is a substring of the command line, arguments joined by spaces.
	Cmdline string `json:"cmdline,omitempty"`
	// UID, when set, is every user id of the process (real, effective,
	// saved and filesystem), so a setuid program run by someone else fails it.
	UID *int `json:"uid,omitempty"`
	// GID, when set, is every group id of the process, likewise.
	GID *int `json:"gid,omitempty"`
	// Exe is an absolute path: the process must be running this very file
	// (compared by device and inode through /proc/PID/exe).
	Exe string `json:"exe,omitempty"`
	// Unit is a systemd unit (libvirtd.service, machine-qemu....scope) of the
	// host's own service manager the process must belong to: never one of
	// the same name in a delegated sub-tree (a service's children, a
	// container's own systemd, a user's manager).
	Unit string `json:"unit,omitempty"`
	// LibvirtDomain is the name of a QEMU domain of libvirt's system
	// instance: the workload is the domain's scope under machine.slice
	// (or, without machined, libvirt's own cgroup under machine), found
	// by the name libvirt gives it while it runs, written in place
	// and never moved. It stands alone: the scope is made by the host's
	// service manager for libvirt, which says whose it is.
	LibvirtDomain string `json:"libvirtDomain,omitempty"`
}

// MaxLibvirtDomain bounds a domain name: libvirt keeps at most 64 bytes of
// it in the scope's name, and refuses names longer than a path component.
const MaxLibvirtDomain = 255

// NamesOwner reports whether the match says whose processes it adopts.
func (m Match) NamesOwner() bool {
	return m.UID != nil || m.GID != nil || m.Exe != "" || m.Unit != "" || m.LibvirtDomain != ""
}

// validate checks the match; field is its path in the document.
func (m Match) validate(field string) error {
	if m.LibvirtDomain != "" {
		return m.validateDomain(field)
	}
	if m.Comm == "" && m.Cmdline == "" && !m.NamesOwner() {
		return fmt.Errorf("%s: give comm or cmdline, and uid, gid, exe or unit", field)
	}
	if _, err := path.Match(m.Comm, ""); err != nil {
		return fmt.Errorf("%s.comm: %q is not a valid pattern", field, m.Comm)
	}
	if !m.NamesOwner() {
		return fmt.Errorf("%s: names no owner; give uid, gid, exe or unit as well "+
			"(comm and cmdline are chosen by whoever starts a process, so they alone would let any user's process be adopted)", field)
	}
	for name, id := range map[string]*int{"uid": m.UID, "gid": m.GID} {
		if id != nil && (*id < 0 || *id > 1<<32-2) {
			return fmt.Errorf("%s.%s: %d is not a user or group id", field, name, *id)
		}
	}
	if m.Exe != "" && (!filepath.IsAbs(m.Exe) || filepath.Clean(m.Exe) != m.Exe) {
		return fmt.Errorf("%s.exe: %q: want a clean absolute path", field, m.Exe)
	}
	if m.Unit != "" && (strings.ContainsAny(m.Unit, "/\x00") || !strings.Contains(m.Unit, ".") || strings.HasPrefix(m.Unit, ".")) {
		return fmt.Errorf("%s.unit: %q: want a unit name such as libvirtd.service", field, m.Unit)
	}
	return nil
}

// validateDomain checks a libvirtDomain match: a name libvirt accepts and
// keeps something of in the machine name, and nothing else beside it.
func (m Match) validateDomain(field string) error {
	if m.Comm != "" || m.Cmdline != "" || m.UID != nil || m.GID != nil || m.Exe != "" || m.Unit != "" {
		return fmt.Errorf("%s.libvirtDomain: stands alone (the domain's scope is the workload); drop comm, cmdline, uid, gid, exe and unit", field)
	}
	d := m.LibvirtDomain
	if len(d) > MaxLibvirtDomain {
		return fmt.Errorf("%s.libvirtDomain: %d bytes, more than %d", field, len(d), MaxLibvirtDomain)
	}
	if strings.ContainsFunc(d, func(r rune) bool { return r == '/' || r < 0x20 || r == 0x7f || r == utf8.RuneError }) {
		return fmt.Errorf("%s.libvirtDomain: %q: a domain name has no '/', control character or invalid UTF-8", field, d)
	}
	if !strings.ContainsFunc(d, func(r rune) bool { return r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)) }) {
		return fmt.Errorf("%s.libvirtDomain: %q: libvirt keeps only ASCII letters, digits, '-' and '.' of a name in its machine's, and this one has no letter or digit to find it by", field, d)
	}
	return nil
}
