package cgroup

import (
	"io/fs"
	"os"
	"syscall"
)

// DirID tells one cgroup directory from another at the same path: a cgroup
// removed and created again is a new directory, with a new inode. On
// cgroupfs (kernfs, 64-bit) an inode number is never handed out twice while
// the system runs; on a disk filesystem, where a tree of plain files stands
// in for cgroupfs, a freed inode number may come back at once, so the
// directory's change time is part of the identity too (a directory created
// anew has its creation time there). The change time also moves when a
// child cgroup comes or goes, or when kernfs builds the directory's inode
// again after dropping it from its cache: the same directory then looks
// new, which costs its files one more read, never a missed write. The zero
// DirID is no directory.
type DirID struct {
	dev, ino uint64
	ctime    int64 // nanoseconds since the epoch
}

func dirIDOf(fi fs.FileInfo) DirID {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return DirID{}
	}
	return DirID{dev: uint64(st.Dev), ino: st.Ino, ctime: st.Ctim.Nano()}
}

// DirID is the identity of cgroup rel's directory in controller ctrl
// (ignored on v2), and whether it exists. Within a Scope it is looked at
// once, as ExistsInScope: a cgroup recreated after the look is told apart
// by the next scope's. Outside a scope every call looks.
// Within a scope a cgroup seen is answered by its name, without resolving
// its path again: the status asks of every knob of every cgroup. With a
// Witness, a scope starts from the identities kept while it vouches for them.
func (h *Hierarchy) DirID(ctrl Controller, rel string) (DirID, bool) {
	key := relKey{ctrl, rel}
	if h.version == V2 {
		key.ctrl = ""
	}
	h.mu.Lock()
	id, ok := h.ids[key]
	h.mu.Unlock()
	if ok {
		return id, true
	}
	scoped := h.scoped()
	if scoped {
		if id, ok = h.witnessed(key); ok {
			h.mu.Lock()
			if h.scopes > 0 {
				h.ids[key] = id
			}
			h.mu.Unlock()
			return id, true
		}
	}
	p, err := h.path(ctrl, rel)
	if err != nil {
		return DirID{}, false
	}
	gen, vouched := h.generation(p) // before any look at it
	dir, err := h.Dir(ctrl, rel)
	if err != nil {
		return DirID{}, false
	}
	if id, ok = h.knownDir(dir); !ok {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			return DirID{}, false
		}
		h.seenDir(dir, fi)
		id = dirIDOf(fi)
	}
	if scoped && vouched {
		h.hold(key, dir, id, gen)
	}
	h.mu.Lock()
	if h.scopes > 0 {
		h.ids[key] = id
	}
	h.mu.Unlock()
	return id, true
}

func (h *Hierarchy) scoped() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.scopes > 0
}

// relKey names a cgroup in a controller (none on v2).
type relKey struct {
	ctrl Controller
	rel  string
}
