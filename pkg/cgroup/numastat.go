package cgroup

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// ParseNumaStat sums, per NUMA node, the lines of a memory.numa_stat file
// named in keys, each count times unit: cgroup v2 lines read
// "anon N0=4096 N1=0" (bytes: unit 1), v1 lines "total=123 N0=100 N1=23"
// (pages: unit the page size). Which lines count is the caller's choice
// (see Hierarchical). No line of keys, or a field that is not
// N<node>=<count>, is an error.
func ParseNumaStat(text string, keys []string, unit uint64) (map[int]uint64, error) {
	out := map[int]uint64{}
	found := false
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		key, _, _ := strings.Cut(f[0], "=")
		if !slices.Contains(keys, key) {
			continue
		}
		found = true
		for _, kv := range f[1:] {
			n, v, ok := strings.Cut(kv, "=")
			if !ok || !strings.HasPrefix(n, "N") {
				return nil, fmt.Errorf("memory.numa_stat: %s: %s is not N<node>=<count>", topology.Quote(key), topology.Quote(kv))
			}
			node, err1 := strconv.Atoi(n[1:])
			count, err2 := strconv.ParseUint(v, 10, 64)
			if err1 != nil || err2 != nil || node < 0 {
				return nil, fmt.Errorf("memory.numa_stat: %s: %s is not N<node>=<count>", topology.Quote(key), topology.Quote(kv))
			}
			// A sum that does not fit is an error, never a wrapped small value.
			hi, bytes := bits.Mul64(count, unit)
			sum, carry := bits.Add64(out[node], bytes, 0)
			if hi != 0 || carry != 0 {
				return nil, fmt.Errorf("memory.numa_stat: %s: N%d: more than 2^64 bytes", topology.Quote(key), node)
			}
			out[node] = sum
		}
	}
	if !found {
		return nil, fmt.Errorf("memory.numa_stat: no %s line", strings.Join(keys, " or "))
	}
	return out, nil
}

// Hierarchical is the v1 line for key that covers the whole subtree
// (hierarchical_<key>, on kernels that print it), else key itself.
func Hierarchical(text, key string) string {
	if strings.Contains(text, "hierarchical_"+key+"=") {
		return "hierarchical_" + key
	}
	return key
}
