package cgroup

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

func steps(ss []Step) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Cgroup+"="+s.Value)
	}
	return strings.Join(out, " ")
}

func TestPlanTreeNested(t *testing.T) {
	for _, tc := range []struct {
		name    string
		strict  bool
		cur     map[string]string
		want    map[string]string
		steps   string
		wantErr string
	}{
		{
			name:  "widen parent before child moves into new CPUs",
			cur:   map[string]string{"": "0-7", "p": "0-1", "p/c": "0-1"},
			want:  map[string]string{"p": "0-3", "p/c": "2-3"},
			steps: "p=0-3 p/c=2-3",
		},
		{
			name:  "narrow child before parent",
			cur:   map[string]string{"": "0-7", "p": "0-3", "p/c": "2-3"},
			want:  map[string]string{"p": "0-1", "p/c": "0"},
			steps: "p/c=0 p=0-1",
		},
		{
			name:  "parent and child both move: widen to the union, then narrow",
			cur:   map[string]string{"": "0-7", "p": "0-3", "p/c": "0-1"},
			want:  map[string]string{"p": "2-5", "p/c": "4-5"},
			steps: "p=0-5 p/c=4-5 p=2-5",
		},
		{
			name:  "child moves inside an unchanged parent: one write",
			cur:   map[string]string{"": "0-7", "p": "0-1", "p/c": "1"},
			want:  map[string]string{"p/c": "0"},
			steps: "p/c=0",
		},
		{
			name:  "equal sets in another spelling: nothing to do",
			cur:   map[string]string{"": "0-7", "p": "0-3"},
			want:  map[string]string{"p": "0,1,2,3"},
			steps: "",
		},
		{
			name:  "three levels, grandchild moves out of the whole old range",
			cur:   map[string]string{"": "0-7", "a": "0-1", "a/b": "0-1", "a/b/c": "0"},
			want:  map[string]string{"a": "4-5", "a/b": "4-5", "a/b/c": "5"},
			steps: "a=0-1,4-5 a/b=0-1,4-5 a/b/c=5 a/b=4-5 a=4-5",
		},
		{
			name:  "siblings swap CPUs under a fixed parent",
			cur:   map[string]string{"": "0-7", "p": "0-1", "p/x": "0", "p/y": "1"},
			want:  map[string]string{"p/x": "1", "p/y": "0"},
			steps: "p/x=1 p/y=0",
		},
		{
			name:    "strict: an unchanged child outside the narrowed parent",
			strict:  true,
			cur:     map[string]string{"": "0-7", "p": "0-3", "p/other": "2-3"},
			want:    map[string]string{"p": "0-1"},
			wantErr: `"p/other" would hold "2-3", not within its parent "p"`,
		},
		{
			name:    "strict: a child outside its unchanged parent",
			strict:  true,
			cur:     map[string]string{"": "0-7", "p": "0-1", "p/c": "0"},
			want:    map[string]string{"p/c": "0-3"},
			wantErr: `not within its parent "p"`,
		},
		{
			name:   "not strict (v2): the same request is only ordered",
			strict: false,
			cur:    map[string]string{"p": "0-1", "p/c": "0"},
			want:   map[string]string{"p/c": "0-3"},
			steps:  "p/c=0-3",
		},
		{
			name:   "strict: fresh v1 cgroup with empty cpus is widened first",
			strict: true,
			cur:    map[string]string{"": "0-1", "n": "", "n/c": ""},
			want:   map[string]string{"n": "0-1", "n/c": "1"},
			steps:  "n=0-1 n/c=1",
		},
		{
			name:    "target without a current value",
			cur:     map[string]string{"": "0-7"},
			want:    map[string]string{"p": "0"},
			wantErr: `no current value for cgroup "p"`,
		},
		{
			name:    "unparsable current value names the cgroup",
			cur:     map[string]string{"p": "x"},
			want:    map[string]string{"p": "0"},
			wantErr: `cgroup "p": current value "x"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.strict || tc.wantErr != "" {
				tc.strict = tc.strict || strings.Contains(tc.name, "strict")
			}
			got, err := PlanTree(TreeInput{Knob: CPUSetCPUs, Order: Nested, Strict: tc.strict, Current: tc.cur, Want: tc.want})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if steps(got) != tc.steps {
				t.Fatalf("steps = %q, want %q", steps(got), tc.steps)
			}
			checkNestedReplay(t, tc.cur, got, tc.strict)
		})
	}
}

// checkNestedReplay replays steps and checks every intermediate tree nests,
// the invariant v1 enforces with EACCES/EBUSY.
func checkNestedReplay(t *testing.T, cur map[string]string, ss []Step, strict bool) {
	t.Helper()
	if !strict {
		return
	}
	state := map[string]string{}
	for k, v := range cur {
		state[k] = v
	}
	for i, s := range ss {
		state[s.Cgroup] = s.Value
		for c, v := range state {
			for p, ok := parentRel(c); ok; p, ok = parentRel(p) {
				if pv, has := state[p]; has {
					if !mustSet(v).IsSubsetOf(mustSet(pv)) {
						t.Fatalf("after step %d (%s=%s): %s=%s not within %s=%s", i, s.Cgroup, s.Value, c, v, p, pv)
					}
					break
				}
			}
		}
	}
}

func TestPlanTreeProtection(t *testing.T) {
	mib := func(n int) string { return fmt.Sprint(n << 20) }
	for _, tc := range []struct {
		name  string
		cur   map[string]string
		want  map[string]string
		steps string
	}{
		{
			name:  "raise parent first",
			cur:   map[string]string{"pod": "0", "pod/c": "0"},
			want:  map[string]string{"pod": mib(200), "pod/c": mib(100)},
			steps: "pod=" + mib(200) + " pod/c=" + mib(100),
		},
		{
			name:  "lower children first",
			cur:   map[string]string{"pod": mib(200), "pod/c": mib(100)},
			want:  map[string]string{"pod": "0", "pod/c": "0"},
			steps: "pod/c=0 pod=0",
		},
		{
			name:  "an unchanged larger child does not make the parent overshoot",
			cur:   map[string]string{"pod": mib(200), "pod/a": mib(150)},
			want:  map[string]string{"pod": mib(50)},
			steps: "pod=" + mib(50),
		},
		{
			name:  "page rounding counts as equal",
			cur:   map[string]string{"pod": "99999744"},
			want:  map[string]string{"pod": "100000000"},
			steps: "",
		},
		{
			name:  "max is above every number",
			cur:   map[string]string{"pod": mib(1), "pod/c": mib(1)},
			want:  map[string]string{"pod": "max", "pod/c": "max"},
			steps: "pod=max pod/c=max",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PlanTree(TreeInput{Knob: MemoryMin, Order: Protection, Current: tc.cur, Want: tc.want})
			if err != nil {
				t.Fatal(err)
			}
			if steps(got) != tc.steps {
				t.Fatalf("steps = %q, want %q", steps(got), tc.steps)
			}
		})
	}
}

func TestPlanTreeRejectsUnordered(t *testing.T) {
	if _, err := PlanTree(TreeInput{Order: Unordered}); err == nil {
		t.Fatal("Unordered has no tree plan")
	}
}

// TestPlanTreeRandomNested plans random moves of random cpuset trees and
// replays them: every intermediate tree must nest and the end state must be
// the wanted one. Every consistent request over the whole tree must plan.
func TestPlanTreeRandomNested(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	nodes := []string{"a", "a/b", "a/c", "a/b/d", "e"}
	randomTree := func() map[string]string {
		m := map[string]string{"": "0-7"}
		for _, n := range nodes {
			p, _ := parentRel(n)
			m[n] = randomSubset(rng, mustSet(m[p]).List())
		}
		return m
	}
	for i := 0; i < 2000; i++ {
		cur, fin := randomTree(), randomTree()
		want := map[string]string{}
		for _, n := range nodes {
			if i%2 == 0 || rng.Intn(2) == 0 { // half the runs change every node
				want[n] = fin[n]
			}
		}
		ss, err := PlanTree(TreeInput{Knob: CPUSetCPUs, Order: Nested, Strict: true, Current: cur, Want: want})
		if err != nil {
			if i%2 == 0 {
				t.Fatalf("consistent request refused: cur=%v want=%v: %v", cur, want, err)
			}
			continue
		}
		checkNestedReplay(t, cur, ss, true)
		end := map[string]string{}
		for _, s := range ss {
			end[s.Cgroup] = s.Value
		}
		for n, v := range want {
			got, ok := end[n]
			if !ok {
				got = cur[n]
			}
			if !mustSet(got).Equals(mustSet(v)) {
				t.Fatalf("cur=%v want=%v steps=%s: %s ends %s", cur, want, steps(ss), n, got)
			}
		}
	}
}

func randomSubset(rng *rand.Rand, from []int) string {
	var out []string
	for _, c := range from {
		if rng.Intn(2) == 0 {
			out = append(out, fmt.Sprint(c))
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprint(from[rng.Intn(len(from))]))
	}
	return strings.Join(out, ",")
}
