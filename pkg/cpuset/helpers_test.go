package cpuset

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
			st := State{Exclusive: mustParse(t, tc.exclusive), BurstMilli: tc.burst}
			res, err := Allocate(topo, st, mustParse(t, tc.reserved), tc.req)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q (got cpus %s)", err, tc.wantErr, res.CPUs)
				}
				if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
					t.Fatalf("error %v is not %v", err, tc.wantIs)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if want := mustParse(t, tc.want); !res.CPUs.Equals(want) {
				t.Fatalf("cpus = %s, want %s", res.CPUs, want)
			}
			if !slices.Equal(res.NUMANodes, tc.wantNodes) {
				t.Fatalf("numa nodes = %v, want %v", res.NUMANodes, tc.wantNodes)
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
