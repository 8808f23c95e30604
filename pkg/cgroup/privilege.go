package cgroup

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// capSysAdmin is CAP_SYS_ADMIN's bit in /proc/PID/status CapEff.
const capSysAdmin = 21

// errNeedsRoot is what an agent without the right to write cgroups says at
// start, instead of running on and failing every reconcile.
var errNeedsRoot = errors.New("needs root (or CAP_SYS_ADMIN) to write cgroups")

// CheckPrivilege says whether this process may write the hierarchy's
// cgroups, so that an agent that could write none refuses to start. A
// cgroup root this user may write (a test's fixture tree) needs no
// privilege.
func (h *Hierarchy) CheckPrivilege() error {
	dir, err := h.Dir(CPUSet, "")
	if err != nil {
		dir = h.Root()
	}
	writable := unix.Faccessat(unix.AT_FDCWD, dir, unix.W_OK, unix.AT_EACCESS) == nil
	return privilegeError(os.Geteuid(), effectiveCaps(), writable, dir)
}

// privilegeError decides: root, CAP_SYS_ADMIN or a writable cgroup root.
func privilegeError(euid int, capEff uint64, rootWritable bool, dir string) error {
	if euid == 0 || capEff&(1<<capSysAdmin) != 0 || rootWritable {
		return nil
	}
	return errors.Join(errNeedsRoot, errors.New("cannot write "+dir+" as uid "+strconv.Itoa(euid)))
}

// effectiveCaps reads this process's effective capabilities; 0 when unknown.
func effectiveCaps() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return caps
		}
	}
	return 0
}
