package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Owner is who a process runs as: its real, effective, saved and
// filesystem user and group ids (/proc/PID/status).
type Owner struct {
	UIDs, GIDs [4]int
}

// Owner reads the process's user and group ids.
func (fs FS) Owner(pid int) (Owner, error) {
	b, err := os.ReadFile(fs.path(pid, "status"))
	if err != nil {
		return Owner{}, err
	}
	o, err := ParseOwner(string(b))
	if err != nil {
		return Owner{}, fmt.Errorf("%s: %w", fs.path(pid, "status"), err)
	}
	return o, nil
}

// ParseOwner reads the Uid: and Gid: lines of a /proc/PID/status text.
func ParseOwner(text string) (Owner, error) {
	var o Owner
	found := 0
	for line := range strings.SplitSeq(text, "\n") {
		key, rest, ok := strings.Cut(line, ":")
		var ids *[4]int
		switch {
		case !ok:
			continue
		case key == "Uid":
			ids = &o.UIDs
		case key == "Gid":
			ids = &o.GIDs
		default:
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 4 {
			return Owner{}, fmt.Errorf("%s: %q: want 4 ids", key, clip(rest))
		}
		for i, s := range f {
			n, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				// Not err itself: it repeats the whole field.
				return Owner{}, fmt.Errorf("%s: %q is not an id (0-4294967295)", key, clip(s))
			}
			ids[i] = int(n)
		}
		found++
	}
	if found != 2 {
		return Owner{}, fmt.Errorf("no Uid: and Gid: lines")
	}
	return o, nil
}

// ExeInfo describes the file the process is running (following
// /proc/PID/exe, so it names the very inode, even one since replaced).
func (fs FS) ExeInfo(pid int) (os.FileInfo, error) {
	return os.Stat(fs.path(pid, "exe"))
}

// SystemdCgroup is the process's path in the hierarchy systemd manages its
// units in: the unified one (v2, "0::") or the named systemd one (v1).
func (fs FS) SystemdCgroup(pid int) (string, error) {
	b, err := os.ReadFile(fs.path(pid, "cgroup"))
	if err != nil {
		return "", err
	}
	unified := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[1] == "name=systemd" {
			return f[2], nil
		}
		if f[0] == "0" && f[1] == "" {
			unified = f[2]
		}
	}
	if unified == "" {
		return "", fmt.Errorf("%s: no systemd hierarchy", fs.path(pid, "cgroup"))
	}
	return unified, nil
}
