package cgroup

import (
	"fmt"
	"sort"
	"strings"
)

// CheckRel validates a cgroup path relative to the hierarchy root. "" names the
// root cgroup. Anything that could name a different place than it appears to —
// absolute paths, ".", "..", empty components (including a trailing slash), NUL
// — is refused outright rather than cleaned, because cleaning hostile text
// silently changes which cgroup it names.
func CheckRel(rel string) error {
	if rel == "" {
		return nil
	}
	if strings.IndexByte(rel, 0) >= 0 {
		return fmt.Errorf("cgroup path %q contains a NUL byte", rel)
	}
	if strings.HasPrefix(rel, "/") {
		return fmt.Errorf("cgroup path %q is absolute; want a path relative to the cgroup root", rel)
	}
	for rest, more := rel, true; more; { // no strings.Split: it is asked of every path resolved
		var c string
		c, rest, more = strings.Cut(rest, "/")
		switch c {
		case "":
			return fmt.Errorf("cgroup path %q has an empty component", rel)
		case ".", "..":
			return fmt.Errorf("cgroup path %q has a %q component", rel, c)
		}
	}
	return nil
}

// parentRel returns the parent of rel; ok is false for the root cgroup "".
func parentRel(rel string) (string, bool) {
	if rel == "" {
		return "", false
	}
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", true
	}
	return rel[:i], true
}

// depth is the number of components of rel; the root cgroup has depth 0.
func depth(rel string) int {
	if rel == "" {
		return 0
	}
	return strings.Count(rel, "/") + 1
}

// prefixes lists rel's ancestors below the root and rel itself, top-down:
// "a/b/c" gives "a", "a/b", "a/b/c".
func prefixes(rel string) []string {
	if rel == "" {
		return nil
	}
	parts := strings.Split(rel, "/")
	out := make([]string, len(parts))
	for i := range parts {
		out[i] = strings.Join(parts[:i+1], "/")
	}
	return out
}

// joinRel appends a child name to a relative cgroup path.
func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// sortTopDown orders cgroups parents first (by depth, then name) so results
// are deterministic; reverse it for children first.
func sortTopDown(rels []string) {
	sort.Slice(rels, func(i, j int) bool {
		di, dj := depth(rels[i]), depth(rels[j])
		if di != dj {
			return di < dj
		}
		return rels[i] < rels[j]
	})
}
