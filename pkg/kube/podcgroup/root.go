package podcgroup

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// Root is the kubelet's cgroupRoot as the names of its levels: nil for the
// top of the hierarchy (the default), ["kubelet"] for kind's /kubelet. The
// kubelet nests its kubepods tree inside it, and the driver spells it: under
// cgroupfs kubelet/kubepods/burstable/pod<uid>, under systemd every slice
// carries the whole chain of names, kubelet.slice/kubelet-kubepods.slice/
// kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod<uid_>.slice.
//
// The root comes from the agent's flag or from what exists under the cgroup
// root, never from pod text.
type Root []string

// rootName is what a level may be called: systemd unit-name characters,
// without the "-" that separates slice levels.
var rootName = regexp.MustCompile(`^[A-Za-z0-9_.:@-]+$`)

// ParseRoot reads a kubelet cgroupRoot: "" or "/" is the top; "/kubelet",
// "kubelet" and the systemd spelling "/kubelet.slice" are all ["kubelet"],
// and "/a.slice/a-b.slice" is ["a", "b"]. Levels must be plain names: no
// "..", no empty level, nothing systemd or the kubelet would not accept.
func ParseRoot(s string) (Root, error) {
	t := strings.Trim(s, "/")
	if t == "" {
		return nil, nil
	}
	var r Root
	for _, level := range strings.Split(t, "/") {
		name := level
		if base, ok := strings.CutSuffix(level, ".slice"); ok {
			// A systemd slice names its parents too (a-b.slice is b in a).
			name = base[strings.LastIndexByte(base, '-')+1:]
			if want := strings.Join(append(slices.Clone(r), name), "-"); base != want {
				return nil, fmt.Errorf("%s: slice %s is not %s.slice, the slice of its parents", topology.Quote(s), topology.Quote(level), want)
			}
		}
		// A name ending in .slice would read back as a slice of its own.
		if name == "" || name == "." || name == ".." || strings.HasSuffix(name, ".slice") || !rootName.MatchString(name) {
			return nil, fmt.Errorf("%s: level %s is not a plain name (letters, digits, '_', '.', ':', '@')", topology.Quote(s), topology.Quote(level))
		}
		r = append(r, name)
	}
	return r, nil
}

// String is the root as a kubelet flag would give it ("/kubelet"; "/" for
// the top).
func (r Root) String() string { return "/" + strings.Join(r, "/") }

// Path places rel, a cgroup as PodCgroup and ContainerCandidates give it
// (relative to the top of the hierarchy), under the root. Which driver's
// spelling applies is told by rel itself: systemd's starts with a slice.
func (r Root) Path(rel string) string {
	if len(r) == 0 || rel == "" {
		return rel
	}
	parts := strings.Split(rel, "/")
	if !strings.HasSuffix(parts[0], ".slice") {
		return strings.Join(r, "/") + "/" + rel
	}
	out := make([]string, 0, len(r)+len(parts))
	for i := range r {
		out = append(out, strings.Join(r[:i+1], "-")+".slice")
	}
	prefix := strings.Join(r, "-") + "-"
	for _, p := range parts {
		if strings.HasSuffix(p, ".slice") {
			p = prefix + p // kubepods-burstable.slice -> kubelet-kubepods-burstable.slice
		}
		out = append(out, p) // scopes keep their names
	}
	return strings.Join(out, "/")
}

// Exists answers for cgroups as PodCgroup spells them by asking exists
// (relative to the top) about their place under the root.
func (r Root) Exists(exists func(rel string) bool) func(rel string) bool {
	if len(r) == 0 {
		return exists
	}
	return func(rel string) bool { return exists(r.Path(rel)) }
}

// FindRoot finds the kubelet's cgroupRoot from what exists: the top when
// kubepods or kubepods.slice is there; else the one directory of the top
// that holds the kubelet's tree (kind's kubelet/kubepods, or
// kubelet.slice/kubelet-kubepods.slice under systemd). found lists every
// candidate seen, for the log; ok is false when there is none (the kubelet
// has not started) or more than one (give the root explicitly).
func FindRoot(exists func(rel string) bool, children func(rel string) ([]string, error)) (r Root, found []string, ok bool) {
	if exists("kubepods") || exists("kubepods.slice") {
		return nil, []string{"/"}, true
	}
	dirs, err := children("")
	if err != nil {
		return nil, nil, false
	}
	var roots []Root
	for _, d := range dirs {
		name, slice := strings.CutSuffix(d, ".slice")
		if !rootName.MatchString(name) || name == "." || name == ".." {
			continue // not a level a kubelet root can have
		}
		under := Root{name}
		if (slice && exists(under.Path("kubepods.slice"))) || (!slice && exists(under.Path("kubepods"))) {
			roots = append(roots, under)
			found = append(found, "/"+d)
		}
	}
	if len(roots) != 1 {
		return nil, found, false
	}
	return roots[0], found, true
}
