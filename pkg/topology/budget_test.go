package topology

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// TestCPUBudget: a budget counts each list before expanding it and refuses
// the list that would go over, naming what the budget is sized from; a
// list that does not parse gets ParseCPUList's error.
func TestCPUBudget(t *testing.T) {
	b := NewCPUBudget(10, "two containers of a 5-CPU pod")
	for _, tc := range []struct {
		list string
		want string // "" for a set
	}{
		{"0-3", ""},
		{"0-3,2-5", ""}, // 6 distinct CPUs: 10 spent
		{"7", "1 CPUs: more than the 0 left of the budget (two containers of a 5-CPU pod)"},
		{"x", "invalid cpu list"},
	} {
		// As a parser under a budget does: charge the list, then expand it.
		_, err := b.Charge(tc.list)
		var set any
		if err == nil {
			set, err = ParseCPUList(tc.list)
		}
		switch {
		case tc.want == "" && err != nil:
			t.Fatalf("%q: %v", tc.list, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Fatalf("%q = %v, %v; want an error containing %q", tc.list, set, err, tc.want)
		}
	}
	if _, err := NewCPUBudget(0, "none").Charge(""); err != nil {
		t.Errorf("an empty list costs nothing: %v", err)
	}
}

// FuzzCountCPUList: a list's count is the size of its set, and its errors
// are ParseCPUList's.
func FuzzCountCPUList(f *testing.F) {
	fuzzseed.Add(f, fuzzseed.Same)
	f.Add("0-3,2-5,9")
	f.Fuzz(func(t *testing.T, s string) {
		var n int
		var err error
		fuzzseed.Timed(t, "CountCPUList", func() { n, err = CountCPUList(s) })
		set, perr := ParseCPUList(s)
		if (err == nil) != (perr == nil) || (err != nil && err.Error() != perr.Error()) {
			t.Fatalf("CountCPUList(%.100q): %v; ParseCPUList: %v", s, err, perr)
		}
		if err == nil && n != set.Size() {
			t.Fatalf("CountCPUList(%.100q) = %d, the set has %d", s, n, set.Size())
		}
	})
}
