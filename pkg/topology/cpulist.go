package topology

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"
)

// maxCPUID bounds the ids a CPU list may name. Linux's NR_CPUS tops out at
// 8192; the margin keeps real machines working while a hostile "0-999999999"
// in a JSON file cannot make Parse allocate a billion-entry set.
const maxCPUID = 1 << 16

// ParseCPUList parses a CPU list in Linux list format ("0-3,8,10-11"). Surrounding
// whitespace, such as the newline sysfs files end with, is ignored.
func ParseCPUList(s string) (cpuset.CPUSet, error) {
	s = strings.TrimSpace(s)
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '-' }) {
		n, err := strconv.Atoi(part)
		if err != nil {
			return cpuset.New(), fmt.Errorf("invalid cpu list %q: %q is not a cpu number", s, part)
		}
		if n > maxCPUID {
			return cpuset.New(), fmt.Errorf("invalid cpu list %q: cpu %d is above %d", s, n, maxCPUID)
		}
	}
	set, err := cpuset.Parse(s)
	if err != nil {
		return cpuset.New(), fmt.Errorf("invalid cpu list %q: %w", s, err)
	}
	return set, nil
}
