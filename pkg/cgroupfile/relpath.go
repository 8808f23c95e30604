package cgroupfile

import (
	"fmt"
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
