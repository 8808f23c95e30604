package cpualloc

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// TestResizeStaysInMemNodes grows sets whose memory is held on named nodes:
// the CPUs added come only from those nodes, even where a nearer free core
// lies outside them, and the result keeps the group as its MemNodes.
func TestResizeStaysInMemNodes(t *testing.T) {
	topo := fixture.MustBuild(memFourNodes)
	cases := []struct {
		name     string
		held     string
		others   string
		memNodes []int
		cpus     int
		want     string
		wantMem  []int
		wantErr  string
		wantIs   error
	}{
		{name: "no group: the nearest node, as before", held: "0-1,8-9", cpus: 6,
			want: "0-2,8-10", wantMem: []int{0, 1}},
		{name: "the group's far node before a nearer one outside it", held: "0-1,8-9", memNodes: []int{0, 2}, cpus: 6,
			want: "0-1,4,8-9,12", wantMem: []int{0, 2}},
		{name: "a shrink keeps the group", held: "0-1,8-9,4,12", memNodes: []int{2, 0, 2}, cpus: 4,
			want: "0-1,8-9", wantMem: []int{0, 2}},
		{name: "the group is full", held: "0-1,8-9", others: "4-5,12-13", memNodes: []int{0, 2}, cpus: 6,
			wantErr: "full-pcpus-then-threads: 2 more CPUs asked beside 0-1,8-9, 0 free on memNodes [0 2]", wantIs: ErrInsufficient},
		{name: "held outside the group", held: "0-1,8-9", memNodes: []int{2}, cpus: 6,
			wantErr: "resize: held CPUs on node 0, outside memNodes [2]", wantIs: ErrInvalidRequest},
		{name: "a node the machine lacks", held: "0-1,8-9", memNodes: []int{0, 9}, cpus: 6,
			wantErr: "resize: memNodes: node 9 is not a NUMA node of the topology (nodes [0 1 2 3])", wantIs: ErrInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			held := mustParse(t, tc.held)
			st := State{Exclusive: BitsOf(held.Union(mustParse(t, tc.others)))}
			res, err := Resize(topo, st, cpuset.New(), held, Request{CPUs: tc.cpus, MemNodes: tc.memNodes})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, tc.wantIs) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.CPUs.Equals(mustParse(t, tc.want)) || !slices.Equal(res.MemNodes, tc.wantMem) {
				t.Fatalf("cpus %s mem %v, want %s mem %v", res.CPUs, res.MemNodes, tc.want, tc.wantMem)
			}
		})
	}
}

// TestWithWithoutMemory: a placement's holdings come off Free with With and
// go back with Without, and a state whose memory is not accounted stays so.
func TestWithWithoutMemory(t *testing.T) {
	topo := fixture.MustBuild(memTwoNodes)
	st := State{Free: map[int]Memory{0: gibs(30), 1: gibs(30)}}
	req := Request{CPUs: 2, Memory: gibs(48)}
	res, err := Allocate(topo, st, cpuset.New(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]Memory{0: gibs(30), 1: gibs(18)}; !maps.Equal(res.MemHeld, want) {
		t.Fatalf("held %v, want %v", res.MemHeld, want)
	}
	with := st.With(res, req)
	if want := map[int]Memory{0: {}, 1: gibs(12)}; !maps.Equal(with.Free, want) {
		t.Fatalf("free after With = %v, want %v", with.Free, want)
	}
	if back := with.Without(res, req); !maps.Equal(back.Free, st.Free) {
		t.Fatalf("free after Without = %v, want %v", back.Free, st.Free)
	}
	if _, err := Allocate(topo, with, cpuset.New(), Request{CPUs: 2, Memory: gibs(13)}); !errors.Is(err, ErrInsufficient) {
		t.Fatalf("13GiB on 12GiB free: %v", err)
	}
	if plain := (State{}).With(res, req); plain.Free != nil {
		t.Fatalf("an unaccounted state gained free memory: %v", plain.Free)
	}
}
