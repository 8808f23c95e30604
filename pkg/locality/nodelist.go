package locality

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"
)

// maxNodeID bounds node ids read from text; Linux's MAX_NUMNODES is 1024.
const maxNodeID = 1 << 10

// ParseNodeList parses a node list in Linux list format ("0-1,3").
func ParseNodeList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '-' }) {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 || n >= maxNodeID {
			return nil, fmt.Errorf("invalid node list %q: %q is not a node number (0-%d)", s, part, maxNodeID-1)
		}
	}
	set, err := cpuset.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("invalid node list %q: %w", s, err)
	}
	return set.List(), nil
}

// FormatNodeList writes nodes as a comma-separated list ("0,1"), the form the
// Event messages use.
func FormatNodeList(nodes []int) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
