package cpualloc

import (
	"errors"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// allocCase is one table row: a machine, its occupancy, a request and the
// exact outcome.
type allocCase struct {
	name      string
	shape     fixture.Shape
	exclusive string
	burst     map[int]int64
	reserved  string
	req       Request
	want      string // CPU list; ignored when wantErr is set
	wantNodes []int
	// wantPolicy, when set, is the Result.Policy expected.
	wantPolicy Policy
	wantErr    string // exact error text
	wantIs     error  // ErrInvalidRequest or ErrInsufficient
}

func mustParse(t testing.TB, s string) cpuset.CPUSet {
	t.Helper()
	set, err := cpuset.Parse(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return set
}

func runCases(t *testing.T, cases []allocCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			topo := fixture.MustBuild(tc.shape)
			st := State{Exclusive: BitsOf(mustParse(t, tc.exclusive)), BurstMilli: tc.burst}
			res, err := Allocate(topo, st, mustParse(t, tc.reserved), tc.req)
			if !checkOutcome(t, res, err, tc.wantErr, tc.wantIs, tc.want, tc.wantNodes) {
				return
			}
			if tc.wantPolicy != "" && res.Policy != tc.wantPolicy {
				t.Fatalf("policy = %q, want %q", res.Policy, tc.wantPolicy)
			}
		})
	}
}

// isolatedShape is s with some CPUs isolated from the scheduler.
func isolatedShape(s fixture.Shape, isolated string) fixture.Shape {
	s.Name += "-isolated"
	s.Isolated = isolated
	return s
}

// offlineShape is s with some CPUs offline.
func offlineShape(s fixture.Shape, offline string) fixture.Shape {
	s.Name += "-offline"
	s.Offline = offline
	return s
}

// checkOutcome checks an allocation's error against wantErr (and wantIs, when
// set), or its CPUs and NUMA nodes; false: an error was wanted and seen, and
// there is no result to check further.
func checkOutcome(t *testing.T, res Result, err error, wantErr string, wantIs error, want string, wantNodes []int) bool {
	t.Helper()
	if wantErr != "" {
		if err == nil || err.Error() != wantErr {
			t.Fatalf("error = %v, want %q (got cpus %s)", err, wantErr, res.CPUs)
		}
		if wantIs != nil && !errors.Is(err, wantIs) {
			t.Fatalf("error %v is not %v", err, wantIs)
		}
		return false
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if w := mustParse(t, want); !res.CPUs.Equals(w) {
		t.Fatalf("cpus = %s, want %s", res.CPUs, w)
	}
	if !slices.Equal(res.NUMANodes, wantNodes) {
		t.Fatalf("numa nodes = %v, want %v", res.NUMANodes, wantNodes)
	}
	return true
}
