package locality

import (
	"bufio"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// Mapping is one line of /proc/PID/numa_maps: a virtual memory area, its
// memory policy and how many of its pages sit on each node.
type Mapping struct {
	Start  uint64
	Policy MemPolicy
	File   string // the mapped file as the kernel escapes it ("" for anonymous memory)
	Heap   bool
	Stack  bool
	// Huge marks a hugetlbfs mapping, whose counts are in huge pages.
	Huge bool
	Anon uint64
	// PageSizeKB is kernelpagesize_kB: the unit of the Nodes counts. It is 4
	// for ordinary and transparent-huge-page memory (a THP counts 512 times),
	// 2048 or 1048576 for hugetlbfs. Zero when the line lists no pages.
	PageSizeKB uint64
	// Nodes holds the N<node>= counts as printed, in PageSizeKB units.
	Nodes NodePages
}

// maxPageSizeKB is the largest page a kernel maps: 16 GiB (POWER's gigantic
// pages); x86's largest is 1 GiB.
const maxPageSizeKB = 16 << 20

// BasePages converts the node counts to base pages of basePageKB KiB.
func (m Mapping) BasePages(basePageKB uint64) NodePages {
	scale := uint64(1)
	if m.PageSizeKB > basePageKB && basePageKB > 0 {
		scale = m.PageSizeKB / basePageKB
	}
	out := NodePages{}
	for id, n := range m.Nodes {
		out[id] = n * scale
	}
	return out
}

// Bytes converts the node counts to bytes.
func (m Mapping) Bytes() NodePages {
	out := NodePages{}
	for id, n := range m.Nodes {
		out[id] = n * m.PageSizeKB * 1024
	}
	return out
}

// ParseNumaMaps parses the text of /proc/PID/numa_maps. Unknown key=value
// fields are ignored so newer kernels keep working; malformed addresses,
// node counts and page sizes are errors naming the line.
func ParseNumaMaps(text string) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		m, err := parseNumaMapsLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("numa_maps line %d %q: %w", line, clip(sc.Text()), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("numa_maps: %w", err)
	}
	return out, nil
}

func parseNumaMapsLine(s string) (Mapping, error) {
	addr, rest, _ := strings.Cut(s, " ")
	start, err := strconv.ParseUint(addr, 16, 64)
	if err != nil {
		return Mapping{}, fmt.Errorf("address %s is not hexadecimal", topology.Quote(addr))
	}
	m := Mapping{Start: start, Nodes: NodePages{}}
	policyText, rest := splitPolicy(rest)
	if m.Policy, err = ParseMemPolicy(policyText); err != nil {
		return Mapping{}, err
	}
	for _, f := range strings.Fields(rest) {
		key, val, hasVal := strings.Cut(f, "=")
		switch {
		case !hasVal:
			m.Heap = m.Heap || key == "heap"
			m.Stack = m.Stack || key == "stack"
			m.Huge = m.Huge || key == "huge"
		case key == "file":
			m.File = val
		case key == "anon":
			if m.Anon, err = strconv.ParseUint(val, 10, 64); err != nil {
				return Mapping{}, fmt.Errorf("anon=%s is not a count", topology.Quote(val))
			}
		case key == "kernelpagesize_kB":
			if m.PageSizeKB, err = strconv.ParseUint(val, 10, 64); err != nil || m.PageSizeKB == 0 {
				return Mapping{}, fmt.Errorf("kernelpagesize_kB=%s is not a positive size", topology.Quote(val))
			}
		case len(key) > 1 && key[0] == 'N' && isDigits(key[1:]):
			id, err := strconv.Atoi(key[1:])
			n, err2 := strconv.ParseUint(val, 10, 64)
			if err != nil || err2 != nil || id >= maxNodeID {
				return Mapping{}, fmt.Errorf("node count %s is malformed", topology.Quote(f))
			}
			if m.Nodes[id]+n < n {
				return Mapping{}, fmt.Errorf("node count %s overflows", topology.Quote(f))
			}
			m.Nodes[id] += n
		}
	}
	if len(m.Nodes) > 0 && m.PageSizeKB == 0 {
		return Mapping{}, fmt.Errorf("node counts without kernelpagesize_kB")
	}
	if m.PageSizeKB > maxPageSizeKB {
		return Mapping{}, fmt.Errorf("kernelpagesize_kB=%d is above the largest page, %d", m.PageSizeKB, maxPageSizeKB)
	}
	// A count whose bytes do not fit 64 bits is no real mapping; refusing it
	// keeps Bytes and BasePages from wrapping to a small number.
	for id, n := range m.Nodes {
		if m.PageSizeKB > 0 && n > math.MaxUint64/(m.PageSizeKB*1024) {
			return Mapping{}, fmt.Errorf("node count N%d=%d of %d kB pages does not fit 64 bits of bytes", id, n, m.PageSizeKB)
		}
	}
	return m, nil
}

// policyModes are the names the kernel prints (mpol_to_str); two hold a space,
// so the policy cannot be split off at the first blank. Longest first.
var policyModes = []string{"weighted interleave", "prefer (many)", "interleave", "default", "prefer", "local", "bind"}

// splitPolicy cuts the policy field ("bind=static:1", "prefer (many):0-1")
// from the rest of a numa_maps line.
func splitPolicy(s string) (policy, rest string) {
	for _, mode := range policyModes {
		if strings.HasPrefix(s, mode) {
			tail := s[len(mode):]
			end := strings.IndexByte(tail, ' ')
			if end < 0 {
				return s, ""
			}
			return s[:len(mode)+end], tail[end+1:]
		}
	}
	policy, rest, _ = strings.Cut(s, " ")
	return policy, rest
}

func isDigits(s string) bool {
	return s != "" && !slices.ContainsFunc([]byte(s), func(c byte) bool { return c < '0' || c > '9' })
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
