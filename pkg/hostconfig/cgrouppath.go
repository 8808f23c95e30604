package hostconfig

import (
	"fmt"
	"strings"
)

// checkCgroupPath holds a cgroup path of the file to the rule the cgroup
// writer holds every path to (cgroup.CheckRel; TestCgroupPathRuleIsTheWriters
// keeps them one rule): relative to the root, "" for the root itself, and no
// absolute path, ".", "..", empty component or NUL, refused rather than
// cleaned, since cleaning hostile text silently changes which cgroup it
// names. It is written here, not imported from the writer, so that reading
// a HostConfig brings no system call into the pure packages that read one
// (pkg/workload, and through it pkg/decide).
func checkCgroupPath(rel string) error {
	if rel == "" {
		return nil
	}
	if strings.IndexByte(rel, 0) >= 0 {
		return fmt.Errorf("cgroup path %q contains a NUL byte", rel)
	}
	if strings.HasPrefix(rel, "/") {
		return fmt.Errorf("cgroup path %q is absolute; want a path relative to the cgroup root", rel)
	}
	for _, c := range strings.Split(rel, "/") {
		switch c {
		case "":
			return fmt.Errorf("cgroup path %q has an empty component", rel)
		case ".", "..":
			return fmt.Errorf("cgroup path %q has a %q component", rel, c)
		}
	}
	return nil
}
