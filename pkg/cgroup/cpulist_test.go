package cgroup

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"
)

func mustSet(s string) cpuset.CPUSet {
	set, _ := cpuset.Parse(s)
	return set
}

// TestSpansAgreeWithCPUSet checks the list parser against
// k8s.io/utils/cpuset on fixed and random lists: same acceptance, same
// error text, same canonical spelling, same union, subset and equality.
func TestSpansAgreeWithCPUSet(t *testing.T) {
	fixed := []string{"", "0", "0-3", "3,0-2", "0-3,8", "8,0-3", "1-1", "0,1,2,3", "5-7,1-6", "0-0,2-2,1",
		"+3", "03", "4-2", "a", "1-", "-1", "1,,2", ",", "1-2-3", "0-191", "0,96", "1-95,97-191"}
	rng := rand.New(rand.NewPCG(7, 11))
	var random []string
	for range 500 {
		var parts []string
		for range 1 + rng.IntN(5) {
			a := rng.IntN(40)
			if rng.IntN(2) == 0 {
				parts = append(parts, strconv.Itoa(a))
			} else {
				parts = append(parts, strconv.Itoa(a)+"-"+strconv.Itoa(a+rng.IntN(10)-2))
			}
		}
		random = append(random, strings.Join(parts, ","))
	}
	all := append(fixed, random...)
	for i, s := range all {
		want, wantErr := cpuset.Parse(s)
		got, err := parseSpans(s)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Errorf("parse %q: error %v, cpuset says %v", s, err, wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if got.String() != want.String() {
			t.Errorf("%q spelt %q, cpuset spells %q", s, got, want)
		}
		o := all[(i*7+3)%len(all)]
		other, err := cpuset.Parse(o)
		if err != nil {
			continue
		}
		os := mustSpans(o)
		if u := got.union(os).String(); u != want.Union(other).String() {
			t.Errorf("%q ∪ %q = %q, cpuset says %q", s, o, u, want.Union(other))
		}
		if got.within(os) != want.IsSubsetOf(other) || got.equal(os) != want.Equals(other) {
			t.Errorf("%q vs %q: within %v equal %v, cpuset says %v %v", s, o,
				got.within(os), got.equal(os), want.IsSubsetOf(other), want.Equals(other))
		}
		if sub := mustSpans(want.Difference(mustSet(o)).String()); !sub.within(got) {
			t.Errorf("%q minus %q = %q is not within %q", s, o, sub, got)
		}
	}
}
