package cgroup

import (
	"sort"
	"strings"

	"github.com/locus-project/locus/pkg/cgroupfile"
)

// CheckRel validates a cgroup path relative to the hierarchy root
// (cgroupfile.CheckRel, where the pure cores check theirs).
func CheckRel(rel string) error { return cgroupfile.CheckRel(rel) }

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
