package cgroup

import (
	"fmt"
	"strings"
)

// The spelling of a cgroup's directory and files under the root, without a
// look at them (Dir and file look, through checkDir).

// path is where Dir finds cgroup rel, spelt without a look.
func (h *Hierarchy) path(ctrl Controller, rel string) (string, error) {
	return h.spell(ctrl, rel, "")
}

// spell is <root>/<ctrl>/<rel>/<name> on v1, <root>/<rel>/<name> on v2, an
// empty rel or name left out, made in one allocation: the writer spells a
// file per op, and joining it piece by piece made a string per piece. The
// root is clean and rel is checked (CheckRel) to hold no ".", ".." or empty
// component, so the result is clean without filepath.Clean, which shows in
// profiles when thousands of cgroup files are resolved per reconcile.
func (h *Hierarchy) spell(ctrl Controller, rel, name string) (string, error) {
	if err := CheckRel(rel); err != nil {
		return "", err
	}
	parts := [3]string{"", rel, name}
	if h.version == V1 {
		if ctrl == "" || strings.ContainsAny(string(ctrl), "/\x00") || ctrl == "." || ctrl == ".." {
			return "", fmt.Errorf("v1 controller %q is not a controller name", ctrl)
		}
		parts[0] = string(ctrl)
	}
	n := len(h.root)
	for _, part := range parts {
		n += 1 + len(part)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(h.root)
	for _, part := range parts {
		if part == "" {
			continue
		}
		if b.Len() > 1 || h.root != "/" { // joinClean's rule: no "//" after the root "/"
			b.WriteByte('/')
		}
		b.WriteString(part)
	}
	return b.String(), nil
}

// file resolves a file inside cgroup rel of controller ctrl. The path is
// checked here and opened later beneath the root with no symlink followed
// (openBeneath), so a directory or file swapped for a symlink in between is
// refused rather than followed.
func (h *Hierarchy) file(ctrl Controller, rel, name string) (string, error) {
	f, _, err := h.fileAndDir(ctrl, rel, name)
	return f, err
}

// fileAndDir is file, and the directory Dir gives, as part of the same
// string.
func (h *Hierarchy) fileAndDir(ctrl Controller, rel, name string) (file, dir string, err error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return "", "", fmt.Errorf("cgroup file name %q is invalid", name)
	}
	f, err := h.spell(ctrl, rel, name)
	if err != nil {
		return "", "", err
	}
	dir = f[:len(f)-len(name)-1]
	if dir == "" {
		dir = "/" // the root "/", on v2, for a file of the root cgroup
	}
	if err := h.checkDir(ctrl, rel, dir); err != nil {
		return "", "", err
	}
	return f, dir, nil
}
