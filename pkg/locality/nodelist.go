package locality

import (
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// maxNodeID bounds node ids read from text (numa_maps): one more than
// topology.MaxNodeID, Linux's MAX_NUMNODES.
const maxNodeID = topology.MaxNodeID + 1

// ParseNodeList parses a node list in Linux list format ("0-1,3"), bounded
// as every list Locus reads is (topology.ParseNodeList).
func ParseNodeList(s string) ([]int, error) { return topology.ParseNodeList(s) }

// FormatNodeList writes nodes as a comma-separated list ("0,1"), the form the
// Event messages use.
func FormatNodeList(nodes []int) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
