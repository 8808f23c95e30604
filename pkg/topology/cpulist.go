package topology

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/cpuset"
)

// Bounds on lists read from outside text (sysfs, cgroup files, pod
// annotations, NodeResourceTopology objects, state files). Every CPU or NUMA
// node list Locus reads goes through ParseCPUList or ParseNodeList, which
// check these before allocating anything, so no text can make a parse cost
// more than a few kilobytes and microseconds: "0-9223372036854775807" is an
// error, not a set of every integer.
const (
	// MaxCPUID is the largest CPU id accepted: Linux's NR_CPUS is at most
	// 8192 on every architecture it supports.
	MaxCPUID = 8191
	// MaxNodeID is the largest NUMA node id accepted: Linux's MAX_NUMNODES
	// is at most 1024.
	MaxNodeID = 1023
	// MaxListLen is the longest list text accepted: every id up to
	// MaxCPUID written out one by one takes about 40 KiB.
	MaxListLen = 64 << 10
)

// ParseCPUList parses a CPU list in Linux list format ("0-3,8,10-11").
// Surrounding whitespace, such as the newline sysfs files end with, is
// ignored; "" is the empty set. Ids above MaxCPUID are an error.
func ParseCPUList(s string) (cpuset.CPUSet, error) {
	ids, err := parseList(s, MaxCPUID, "cpu")
	if err != nil {
		return cpuset.New(), fmt.Errorf("invalid cpu list %s: %w", Quote(s), err)
	}
	return cpuset.New(ids...), nil
}

// ParseNodeList parses a NUMA node list in Linux list format ("0-1,3"), as
// ParseCPUList does, into sorted node ids. Ids above MaxNodeID are an error.
func ParseNodeList(s string) ([]int, error) {
	ids, err := parseList(s, MaxNodeID, "node")
	if err != nil {
		return nil, fmt.Errorf("invalid node list %s: %w", Quote(s), err)
	}
	return ids, nil
}

// CountCPUList is how many CPUs a CPU list names, read as ParseCPUList
// reads it (the same errors) without making the set: a parser of a
// document with many lists bounds their total with it before it expands
// any (CPUBudget).
func CountCPUList(s string) (int, error) {
	_, n, err := spansOf(s, MaxCPUID, "cpu")
	if err != nil {
		return 0, fmt.Errorf("invalid cpu list %s: %w", Quote(s), err)
	}
	return n, nil
}

// parseList reads a list of ids in 0..limit into sorted, distinct ids. Its
// cost is bounded by len(s) and limit whatever the text says.
func parseList(s string, limit int, what string) ([]int, error) {
	spans, n, err := spansOf(s, limit, what)
	if err != nil || n == 0 {
		return nil, err
	}
	ids := make([]int, 0, n)
	next := 0
	for _, r := range spans {
		for id := max(r.lo, next); id <= r.hi; id++ {
			ids = append(ids, id)
		}
		next = max(next, r.hi+1)
	}
	return ids, nil
}

type span struct{ lo, hi int }

// spansOf reads a list's ranges, sorted by their start, and counts the
// distinct ids they cover, without listing them.
func spansOf(s string, limit int, what string) ([]span, int, error) {
	s = strings.TrimSpace(s)
	if len(s) > MaxListLen {
		return nil, 0, fmt.Errorf("%d bytes long, more than %d", len(s), MaxListLen)
	}
	if s == "" {
		return nil, 0, nil
	}
	var spans []span
	for part := range strings.SplitSeq(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, err := parseID(a, limit, what)
		if err != nil {
			return nil, 0, err
		}
		hi := lo
		if isRange {
			if hi, err = parseID(b, limit, what); err != nil {
				return nil, 0, err
			}
			if lo > hi {
				return nil, 0, fmt.Errorf("range %q runs backwards", part)
			}
		}
		spans = append(spans, span{lo, hi})
	}
	// Sorted and merged, the spans are walked once each: the cost is
	// len(s) log len(s) plus the ids themselves, however spans overlap.
	slices.SortFunc(spans, func(x, y span) int { return x.lo - y.lo })
	n, next := 0, 0 // next: ids below it are counted
	for _, r := range spans {
		n += max(0, r.hi+1-max(r.lo, next))
		next = max(next, r.hi+1)
	}
	return spans, n, nil
}

// parseID reads one decimal id: digits only (no sign, no spaces), at most
// limit; a number too large for an int is above the limit too.
func parseID(s string, limit int, what string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty %s number", what)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%s is not a %s number", Quote(s), what)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > limit {
		return 0, fmt.Errorf("%s %s is above the largest %s id %d", what, Quote(s), what, limit)
	}
	return n, nil
}

// QuoteMax is how much of a hostile value an error message repeats.
const QuoteMax = 64

// Quote quotes a value for an error message, cut to QuoteMax bytes so that
// a huge value from outside cannot make a huge log line or Event.
func Quote(s string) string {
	if len(s) <= QuoteMax {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:QuoteMax]), len(s))
}
