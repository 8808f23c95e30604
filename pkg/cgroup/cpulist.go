package cgroup

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// span is one range of a Linux list ("0-3" or "8"), both ends included.
type span struct{ lo, hi int }

// spans is a Linux list ("0-3,8") as sorted, disjoint, non-adjacent ranges,
// so that two equal sets have equal spans. It accepts what
// k8s.io/utils/cpuset.Parse accepts, ids up to maxListID, without building a
// set of every CPU: lists are parsed, compared and merged thousands of times per reconcile.
type spans []span

// maxListID and maxListLen are the bounds every list Locus reads is held
// to (topology.ParseCPUList); the id bound also keeps the merging
// arithmetic (hi+1) from wrapping.
const (
	maxListID  = topology.MaxCPUID
	maxListLen = topology.MaxListLen
)

func parseSpans(s string) (spans, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) > maxListLen {
		return nil, fmt.Errorf("%d bytes long, more than %d", len(s), maxListLen)
	}
	out := make(spans, 0, strings.Count(s, ",")+1)
	for r := range strings.SplitSeq(s, ",") {
		a, b, isRange := strings.Cut(r, "-")
		lo, err := strconv.Atoi(a)
		if err != nil {
			return nil, clipNumErr(err)
		}
		hi := lo
		if isRange {
			if hi, err = strconv.Atoi(b); err != nil {
				return nil, clipNumErr(err)
			}
			if lo > hi {
				return nil, fmt.Errorf("invalid range %s (%d > %d)", topology.Quote(r), lo, hi)
			}
		}
		if lo < 0 || hi > maxListID {
			return nil, fmt.Errorf("%s: ids run from 0 to %d", topology.Quote(r), maxListID)
		}
		out = append(out, span{lo, hi})
	}
	return out.normal(), nil
}

// clipNumErr cuts the number strconv's error repeats to topology.QuoteMax bytes;
// short ones keep the text cpuset.Parse gives.
func clipNumErr(err error) error {
	if ne, ok := err.(*strconv.NumError); ok && len(ne.Num) > topology.QuoteMax {
		return &strconv.NumError{Func: ne.Func, Num: ne.Num[:topology.QuoteMax] + "…", Err: ne.Err}
	}
	return err
}

// normal sorts and merges overlapping and adjacent ranges, in place.
func (s spans) normal() spans {
	sorted := true
	for i := 1; i < len(s); i++ {
		sorted = sorted && s[i-1].hi+1 < s[i].lo
	}
	if sorted {
		return s
	}
	slices.SortFunc(s, func(a, b span) int { return a.lo - b.lo })
	out := s[:1]
	for _, r := range s[1:] {
		if last := &out[len(out)-1]; r.lo <= last.hi+1 {
			last.hi = max(last.hi, r.hi)
		} else {
			out = append(out, r)
		}
	}
	return out
}

// String is the kernel's spelling, as cpuset.CPUSet.String writes it.
func (s spans) String() string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(r.lo))
		if r.hi != r.lo {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(r.hi))
		}
	}
	return b.String()
}

func (s spans) union(t spans) spans {
	return append(append(make(spans, 0, len(s)+len(t)), s...), t...).normal()
}

// within reports whether every element of s is in t.
func (s spans) within(t spans) bool {
	j := 0
	for _, r := range s {
		for j < len(t) && t[j].hi < r.lo {
			j++
		}
		if j == len(t) || t[j].lo > r.lo || t[j].hi < r.hi {
			return false // normal t: r cannot straddle two of its ranges
		}
	}
	return true
}

func (s spans) equal(t spans) bool { return slices.Equal(s, t) }

// mustSpans parses a list already validated.
func mustSpans(s string) spans {
	out, _ := parseSpans(s)
	return out
}
