package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// DefaultRoot is where hosts mount cgroups.
const DefaultRoot = "/sys/fs/cgroup"

// Controller names a v1 hierarchy (the directory under the root holding it).
// On v2 there is one hierarchy and controllers do not appear in paths.
type Controller string

const (
	CPUSet  Controller = "cpuset"
	CPU     Controller = "cpu"
	CPUAcct Controller = "cpuacct"
	Memory  Controller = "memory"
)

// managedV1 are the v1 hierarchies in which Locus creates cgroups and moves
// processes. Order matters: readers that need "some" hierarchy take the first.
var managedV1 = []Controller{CPUSet, Memory, CPU, CPUAcct}

// Hierarchy is a cgroup root of a known version. It resolves relative cgroup
// paths to directories and files and guarantees they stay inside the root.
type Hierarchy struct {
	root    string // as configured, absolute and clean
	real    string // root with symlinks resolved, for containment checks
	version Version

	mu     sync.Mutex
	scopes int              // open scopes (see Scope)
	inside map[string]bool  // directories verified inside the root in this scope
	dirs   map[string]DirID // of them, those seen to be directories (Exists), and which
	ids    map[relKey]DirID // the same by cgroup, for DirID's questions
	mounts []Controller     // v1Mounts, found once in this scope
	// lastScope is how many entries the last scope's maps held.
	lastScope scopeSizes
	// Identities kept past a scope while a Witness vouches for them
	// (SetWitness).
	witness   Witness
	held      map[relKey]held
	heldSweep int // sweep held when it grows past this
	// The root's descriptor shared by the opens of a scope (rootDir).
	rootFD    int
	rootHeld  bool
	rootUsers int
}

// Open checks root (DefaultRoot when "") and detects its version unless v
// forces one.
func Open(root string, v Version) (*Hierarchy, error) {
	if root == "" {
		root = DefaultRoot
	}
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("cgroup root %q is not an absolute path", root)
	}
	root = filepath.Clean(root)
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("cgroup root: %w", err)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("cgroup root %s is not a directory", root)
	}
	switch v {
	case Auto:
		if v, err = Detect(root); err != nil {
			return nil, err
		}
	case V1, V2:
	default:
		return nil, fmt.Errorf("cgroup version %d: want v1 or v2", int(v))
	}
	return &Hierarchy{root: root, real: real, version: v}, nil
}

// Root is the configured cgroup root.
func (h *Hierarchy) Root() string { return h.root }

// Version is the detected or forced cgroup version.
func (h *Hierarchy) Version() Version { return h.version }

// NarrowingMigrates says whether taking nodes out of a cgroup's cpuset.mems
// makes the kernel migrate its pages inside the write: always on v2; on v1
// only with cpuset.memory_migrate, which the agent leaves off.
func (h *Hierarchy) NarrowingMigrates() bool { return h.version == V2 }

// Dir resolves cgroup rel in controller ctrl: <root>/<ctrl>/<rel> on v1,
// <root>/<rel> on v2 (ctrl ignored). The directory need not exist.
func (h *Hierarchy) Dir(ctrl Controller, rel string) (string, error) {
	p, err := h.path(ctrl, rel)
	if err != nil {
		return "", err
	}
	return p, h.checkDir(ctrl, rel, p)
}

// checkDir checks that p, cgroup rel's directory in ctrl, lies inside the
// root: vouched for by the witness, or looked at (contain).
func (h *Hierarchy) checkDir(ctrl Controller, rel, p string) error {
	if h.vouched(ctrl, rel, p) {
		return nil
	}
	return h.contain(p)
}

// key names a file relative to the root; it identifies originals and the
// cgroups Locus created, and stays stable while the root does.
func (h *Hierarchy) key(path string) string {
	if rel, ok := strings.CutPrefix(path, h.root+"/"); ok && h.root != "/" {
		return rel // paths come from Dir and file: already clean
	}
	rel, err := filepath.Rel(h.root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// Scope makes h remember, until the returned function is called, the
// directories it has verified to lie inside the root, so that a batch of
// writes or one reconcile resolves each cgroup directory once instead of once
// per file. Scopes nest; the memory goes when the outermost ends. Outside a
// scope every path is resolved afresh.
func (h *Hierarchy) Scope() (end func()) {
	h.mu.Lock()
	h.scopes++
	if h.inside == nil {
		// Sized as the last scope's: a reconcile looks at about as many
		// directories as the one before, and these maps grown from nothing
		// each time were 2 % of the bytes the agent allocated under a
		// 300-pod churn.
		n := h.lastScope
		h.inside, h.dirs, h.ids = make(map[string]bool, n.inside), make(map[string]DirID, n.dirs), make(map[relKey]DirID, n.ids)
	}
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			if h.scopes--; h.scopes == 0 {
				h.lastScope = scopeSizes{inside: len(h.inside), dirs: len(h.dirs), ids: len(h.ids)}
				h.inside, h.dirs, h.ids, h.mounts = nil, nil, nil, nil
				h.closeRootIfIdle()
			}
			h.mu.Unlock()
		})
	}
}

// verified says whether dir was verified in the current scope, and whether
// a scope is open at all.
func (h *Hierarchy) verified(dir string) (ok, scoped bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inside[dir], h.scopes > 0
}

func (h *Hierarchy) remember(dir string) {
	h.mu.Lock()
	if h.scopes > 0 {
		h.inside[dir] = true
	}
	h.mu.Unlock()
}

// forget drops what the scope knows of a directory removed.
func (h *Hierarchy) forget(dir string) {
	h.mu.Lock()
	delete(h.inside, dir)
	delete(h.dirs, dir)
	clear(h.ids) // removals are few: no index from directory to cgroup
	h.unhold(dir)
	h.mu.Unlock()
}

// knownDir says whether dir was seen to be a directory in the current
// scope, and which (its DirID); seenDir records it from its stat. A
// reconcile asks whether the same cgroups exist several times (the source,
// the preparation, the writer, the executor's confirmations): within a
// scope the answer is one stat, not one per question.
func (h *Hierarchy) knownDir(dir string) (DirID, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id, ok := h.dirs[dir]
	return id, ok
}

func (h *Hierarchy) seenDir(dir string, fi fs.FileInfo) {
	id := dirIDOf(fi)
	h.mu.Lock()
	if h.scopes > 0 {
		if old, ok := h.dirs[dir]; ok && old != id {
			clear(h.ids) // made anew within the scope: DirID answers anew
		}
		h.dirs[dir] = id
	}
	h.mu.Unlock()
}

// contain checks that directory p lies inside the root. Lexical checks alone
// would accept a symlink planted in the tree that points elsewhere, so the
// symlinks of the longest existing prefix of p are resolved. (On a real
// cgroupfs only root can change the tree, and cgroupfs itself has no
// symlinks; v1 roots do, e.g. cpu -> cpu,cpuacct, which resolve inside the
// root and pass.) Within a Scope an existing directory is verified once, and
// a real directory (not a symlink) in a verified one is inside too, as is a
// name absent from one, which costs one lstat instead of resolving the
// whole path.
func (h *Hierarchy) contain(p string) error {
	ok, scoped := h.verified(p)
	if ok {
		return nil
	}
	if scoped && strings.HasPrefix(p, h.root+string(filepath.Separator)) {
		parent := filepath.Dir(p)
		if h.contain(parent) == nil {
			if ok, _ := h.verified(parent); ok {
				fi, err := os.Lstat(p)
				if err == nil && fi.IsDir() {
					h.remember(p)
					h.seenDir(p, fi)
					return nil
				}
				if errors.Is(err, fs.ErrNotExist) {
					// A name that is not there, in a directory inside:
					// inside too (and not remembered: it may yet be
					// created as something else). A container's cgroup is
					// looked for under several names, most of them absent.
					return nil
				}
			}
		}
	}
	existing, rest := p, ""
	var resolved string
	for {
		r, err := filepath.EvalSymlinks(existing)
		if err == nil {
			resolved = filepath.Join(r, rest)
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("resolve %s: %w", p, err)
		}
		if fi, lerr := os.Lstat(existing); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: dangling symlink %s inside the cgroup root", p, existing)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return fmt.Errorf("%s: no existing ancestor", p)
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	if resolved != h.real && !strings.HasPrefix(resolved, h.real+string(filepath.Separator)) {
		return fmt.Errorf("%s resolves to %s, outside the cgroup root %s", p, resolved, h.root)
	}
	if rest == "" {
		// Only directories that exist are remembered: a missing one may yet
		// be created as something else.
		h.remember(p)
	}
	return nil
}

// scopeSizes are the sizes of a scope's maps, for sizing the next scope's.
type scopeSizes struct{ inside, dirs, ids int }
