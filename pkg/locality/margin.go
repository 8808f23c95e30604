package locality

import (
	"fmt"
	"strconv"
	"strings"
)

// Margin is the free memory a target node must keep after a migration, so
// that moving memory in never pushes the node into reclaim or OOM: the larger
// of MinBytes and Percent of the node's size.
type Margin struct {
	MinBytes uint64
	Percent  float64
}

// DefaultMargin keeps max(256 MiB, 3 % of the node) free.
var DefaultMargin = Margin{MinBytes: 256 << 20, Percent: 3}

// For is the margin of a node of total bytes.
func (m Margin) For(total uint64) uint64 {
	return max(m.MinBytes, uint64(float64(total)*m.Percent/100))
}

func (m Margin) String() string {
	s := fmt.Sprintf("%d MiB", m.MinBytes>>20)
	if m.Percent > 0 {
		s = fmt.Sprintf("max(%s, %s %% of the node)", s, strconv.FormatFloat(m.Percent, 'f', -1, 64))
	}
	return s
}

// ParseMargin reads a margin written as "256Mi", "3%" or "256Mi,3%" (the
// larger of the two applies). Sizes take Ki, Mi, Gi suffixes or none (bytes).
func ParseMargin(s string) (Margin, error) {
	var m Margin
	if strings.TrimSpace(s) == "" {
		return m, fmt.Errorf("margin is empty: want a size (256Mi), a percentage (3%%) or both (256Mi,3%%)")
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if pct, ok := strings.CutSuffix(part, "%"); ok {
			v, err := strconv.ParseFloat(pct, 64)
			if err != nil || v < 0 || v > 100 {
				return Margin{}, fmt.Errorf("margin %q: %q is not a percentage from 0 to 100", s, part)
			}
			m.Percent = v
			continue
		}
		v, err := parseSize(part)
		if err != nil {
			return Margin{}, fmt.Errorf("margin %q: %w", s, err)
		}
		m.MinBytes = v
	}
	return m, nil
}

func parseSize(s string) (uint64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}}
	orig, shift := s, uint(0)
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = num, u.shift
			break
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > (1<<63)>>shift {
		return 0, fmt.Errorf("%q is not a size (like 268435456, 512Ki, 256Mi, 1Gi)", orig)
	}
	return v << shift, nil
}
