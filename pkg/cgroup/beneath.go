package cgroup

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Opening a cgroup file by its absolute path would resolve every directory
// on the way at the moment of the open, long after contain checked it: a
// directory swapped for a symlink in between would be followed out of the
// root. So every open, mkdir and rmdir starts from a descriptor of the root
// and resolves the rest beneath it, refusing any symlink: with openat2
// (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS), or where the kernel lacks it
// (before 5.6) one component at a time with O_NOFOLLOW.
//
// The one symlink allowed is a v1 controller name under the root
// (cpu -> cpu,cpuacct), which must resolve to a sibling inside the root.

// useOpenat2 is cleared when the kernel answers ENOSYS; tests clear it to
// exercise the walk.
var useOpenat2 atomic.Bool

func init() { useOpenat2.Store(true) }

// openBeneath opens path (inside the root; built by Dir or file) with flags
// and returns the descriptor, which the caller closes.
func (h *Hierarchy) openBeneath(path string, flags int) (int, error) {
	if path == h.root {
		return unixOpen(h.real, unix.O_PATH|unix.O_DIRECTORY)
	}
	base, shared, err := h.rootDir()
	if err != nil {
		return -1, err
	}
	defer h.releaseRoot(base, shared)
	rel, ok := strings.CutPrefix(path, h.root+"/")
	if h.root == "/" {
		rel, ok = strings.CutPrefix(path, "/")
	}
	if !ok || rel == "" {
		return -1, fmt.Errorf("%s is not inside the cgroup root %s: %w", path, h.root, unix.EXDEV)
	}
	if h.version == V1 {
		ctrl, rest, found := strings.Cut(rel, "/")
		if !found { // the hierarchy's own directory
			return openController(base, ctrl)
		}
		cfd, err := openController(base, ctrl)
		if err != nil {
			return -1, err
		}
		defer unix.Close(cfd)
		base, rel = cfd, rest
	}
	return openNoSymlinks(base, rel, flags)
}

// rootDir is a descriptor of the root to open paths beneath: within a Scope
// one kept open until the outermost scope ends and no open uses it (shared),
// which spares every file of a reconcile an open and a close of the root;
// outside a scope one of its own. releaseRoot gives it back.
func (h *Hierarchy) rootDir() (fd int, shared bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.scopes == 0 {
		fd, err = unixOpen(h.real, unix.O_PATH|unix.O_DIRECTORY)
		return fd, false, err
	}
	if !h.rootHeld {
		if h.rootFD, err = unixOpen(h.real, unix.O_PATH|unix.O_DIRECTORY); err != nil {
			return -1, false, err
		}
		h.rootHeld = true
	}
	h.rootUsers++
	return h.rootFD, true, nil
}

func (h *Hierarchy) releaseRoot(fd int, shared bool) {
	if !shared {
		unix.Close(fd)
		return
	}
	h.mu.Lock()
	h.rootUsers--
	h.closeRootIfIdle()
	h.mu.Unlock()
}

// closeRootIfIdle closes the shared root descriptor once no scope is open
// and no open uses it; h.mu is held.
func (h *Hierarchy) closeRootIfIdle() {
	if h.rootHeld && h.scopes == 0 && h.rootUsers == 0 {
		unix.Close(h.rootFD)
		h.rootHeld = false
	}
}

// openController opens a v1 hierarchy directory under the root: a real
// directory, or a symlink to a sibling (cpu -> cpu,cpuacct).
func openController(root int, name string) (int, error) {
	fd, err := openNoSymlinks(root, name, unix.O_PATH|unix.O_DIRECTORY)
	if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
		return fd, err
	}
	buf := make([]byte, 256)
	n, rerr := unix.Readlinkat(root, name, buf)
	if rerr != nil {
		return -1, err
	}
	target := string(buf[:n])
	if target == "" || strings.ContainsRune(target, '/') || target == "." || target == ".." {
		return -1, fmt.Errorf("v1 hierarchy %s links to %q, not a sibling in the cgroup root: %w", name, target, unix.EXDEV)
	}
	return openNoSymlinks(root, target, unix.O_PATH|unix.O_DIRECTORY)
}

// openNoSymlinks opens rel beneath dirfd, refusing symlinks and "..".
func openNoSymlinks(dirfd int, rel string, flags int) (int, error) {
	flags |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	if useOpenat2.Load() {
		how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
		for {
			fd, err := unix.Openat2(dirfd, rel, &how)
			switch err {
			case unix.EINTR, unix.EAGAIN: // EAGAIN: a rename raced the lookup; retry
				continue
			case unix.ENOSYS:
				useOpenat2.Store(false)
			default:
				return fd, err
			}
			break
		}
	}
	return walkNoSymlinks(dirfd, rel, flags)
}

// walkNoSymlinks is openNoSymlinks for kernels without openat2: each
// directory is opened with O_NOFOLLOW from the one before.
func walkNoSymlinks(dirfd int, rel string, flags int) (int, error) {
	parts := strings.Split(rel, "/")
	cur := dirfd
	defer func() {
		if cur != dirfd {
			unix.Close(cur)
		}
	}()
	for i, p := range parts {
		if p == "" || p == "." || p == ".." {
			return -1, fmt.Errorf("path %q has a %q component: %w", rel, p, unix.EXDEV)
		}
		f := unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i == len(parts)-1 {
			f = flags
		}
		fd, err := openatRetry(cur, p, f)
		if err != nil {
			if errors.Is(err, unix.ENOTDIR) && i < len(parts)-1 {
				err = unix.ELOOP // an O_PATH open of a symlink gives the link itself
			}
			return -1, err
		}
		if cur != dirfd {
			unix.Close(cur)
		}
		cur = fd
	}
	fd := cur
	cur = dirfd // handed to the caller, not closed
	return fd, nil
}

func openatRetry(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

func unixOpen(path string, flags int) (int, error) {
	for {
		fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// inParent runs f on the directory that holds dir (opened beneath the root)
// and dir's last name; mkdir and rmdir of cgroups go through it.
func (h *Hierarchy) inParent(dir string, f func(parent int, name string) error) error {
	i := strings.LastIndexByte(dir, '/')
	if i <= 0 {
		return fmt.Errorf("%s is not inside the cgroup root %s: %w", dir, h.root, unix.EXDEV)
	}
	pfd, err := h.openBeneath(dir[:i], unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	return f(pfd, dir[i+1:])
}

// mkdirCgroup creates cgroup directory dir beneath the root.
func (h *Hierarchy) mkdirCgroup(dir string) error {
	err := h.inParent(dir, func(p int, name string) error { return unix.Mkdirat(p, name, 0o755) })
	if err != nil {
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}

// rmdirCgroup removes cgroup directory dir beneath the root.
func (h *Hierarchy) rmdirCgroup(dir string) error {
	err := h.inParent(dir, func(p int, name string) error { return unix.Unlinkat(p, name, unix.AT_REMOVEDIR) })
	if err != nil {
		return &os.PathError{Op: "rmdir", Path: dir, Err: err}
	}
	return nil
}
