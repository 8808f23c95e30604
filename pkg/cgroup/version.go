package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Version is the cgroup interface a hierarchy speaks.
type Version int

const (
	// Auto asks Open to detect the version from the filesystem.
	Auto Version = 0
	// V1: one mount per controller under the root (<root>/cpuset, <root>/memory, ...).
	V1 Version = 1
	// V2: the root itself is the unified cgroup2 mount.
	V2 Version = 2
)

func (v Version) String() string {
	switch v {
	case Auto:
		return "auto"
	case V1:
		return "v1"
	case V2:
		return "v2"
	}
	return fmt.Sprintf("Version(%d)", int(v))
}

// ParseVersion reads a --cgroup-version style value: "auto" (or ""), "v1"/"1",
// "v2"/"2".
func ParseVersion(s string) (Version, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return Auto, nil
	case "1", "v1":
		return V1, nil
	case "2", "v2":
		return V2, nil
	}
	return Auto, fmt.Errorf("cgroup version %q: want auto, v1 or v2", s)
}

// Detect tells v1 from v2 by filesystem magic: a cgroup2 mount at root is v2; a
// directory (normally tmpfs) holding v1 cpuset or memory mounts is v1, which
// also covers hybrid hosts whose cgroup2 mount sits at <root>/unified, because
// the controllers Locus writes live in the v1 mounts there. Fixture trees on a
// plain filesystem are neither; callers force the version for those.
func Detect(root string) (Version, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		return Auto, fmt.Errorf("detect cgroup version of %s: %w", root, err)
	}
	switch int64(st.Type) {
	case unix.CGROUP2_SUPER_MAGIC:
		return V2, nil
	case unix.CGROUP_SUPER_MAGIC:
		return Auto, fmt.Errorf("detect cgroup version: %s is a single v1 controller mount; "+
			"configure the directory that holds the controller mounts", root)
	}
	for _, c := range []Controller{CPUSet, Memory} {
		var sub unix.Statfs_t
		if unix.Statfs(filepath.Join(root, string(c)), &sub) == nil &&
			int64(sub.Type) == unix.CGROUP_SUPER_MAGIC {
			return V1, nil
		}
	}
	return Auto, fmt.Errorf("detect cgroup version: %s is not a cgroup2 mount and holds no v1 "+
		"cpuset or memory mount (filesystem magic %#x); set the cgroup version explicitly", root, st.Type)
}

// v1Mounts lists the managed v1 hierarchies present under the root, skipping a
// name that resolves to a hierarchy already listed (cpu and cpuacct are often
// one mount reached through two symlinks).
func (h *Hierarchy) v1Mounts() []Controller {
	var out []Controller
	seen := map[string]bool{}
	for _, c := range managedV1 {
		real, err := filepath.EvalSymlinks(filepath.Join(h.root, string(c)))
		if err != nil || seen[real] {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		seen[real] = true
		out = append(out, c)
	}
	return out
}

// hierarchies lists the controllers to visit for per-cgroup operations: the
// managed v1 mounts, or a single "" on v2.
func (h *Hierarchy) hierarchies() []Controller {
	if h.version == V2 {
		return []Controller{""}
	}
	h.mu.Lock()
	mounts, scoped := h.mounts, h.scopes > 0
	h.mu.Unlock()
	if mounts != nil {
		return mounts
	}
	mounts = h.v1Mounts()
	if scoped {
		h.mu.Lock()
		if h.scopes > 0 {
			h.mounts = mounts
		}
		h.mu.Unlock()
	}
	return mounts
}
