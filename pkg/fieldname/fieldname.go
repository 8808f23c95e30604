// Package fieldname suggests the field a misspelt configuration key meant,
// so that "unknown field" errors say what to write instead.
package fieldname

import "strings"

// Closest returns the known name nearest to key: one equal but for letter
// case, else one within a small edit distance (a third of its length, at
// most 3). ok is false when none is near enough to be a likely typo.
func Closest(key string, known []string) (best string, ok bool) {
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return k, true
		}
	}
	bestDist := -1
	for _, k := range known {
		limit := min(3, max(1, len(k)/3))
		if d := distance(strings.ToLower(key), strings.ToLower(k)); d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = k, d
		}
	}
	return best, bestDist >= 0
}

// distance is the Levenshtein distance between a and b, on bytes: field
// names are ASCII. Keys longer than any field name are not worth comparing.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
