package cpualloc

import (
	"errors"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// resizeShape: two sockets of one NUMA node each, two L3 groups per node,
// two cores per L3, two adjacent threads per core. Node 0 is CPUs 0-7 (L3
// 0-3 and 4-7), node 1 CPUs 8-15 (L3 8-11 and 12-15); core c is CPUs 2c and
// 2c+1.
var resizeShape = fixture.Shape{Name: "2s-2l3-ht", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 2, CoresPerSocket: 4,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 1 << 30}

func TestResize(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		held, exclusive, reserved string
		req                       Request
		want                      string
		wantNodes                 []int
		wantErr                   string
		wantIs                    error
	}{
		// Grow: the set's cores first, then its L3 group, its node, its
		// socket, the nearest node.
		{name: "grow completes its core", held: "2", req: Request{CPUs: 2}, want: "2-3", wantNodes: []int{0}},
		{name: "grow in its L3 group", held: "2-3", req: Request{CPUs: 4}, want: "0-3", wantNodes: []int{0}},
		{name: "grow in its L3 group around others", held: "0-1", exclusive: "2", req: Request{CPUs: 3}, want: "0-1,3", wantNodes: []int{0}},
		{name: "grow on its node when its L3 is full", held: "0-1", exclusive: "2-3", req: Request{CPUs: 4}, want: "0-1,4-5", wantNodes: []int{0}},
		{name: "grow keeps every held CPU", held: "1,6", req: Request{CPUs: 4}, want: "0-1,6-7", wantNodes: []int{0}},
		{name: "grow whole cores first, then a thread", held: "8-9", exclusive: "10", req: Request{CPUs: 5}, want: "8-9,11-13", wantNodes: []int{1}},
		{name: "grow onto the other node when its own is full", held: "0-7", req: Request{CPUs: 10}, want: "0-9", wantNodes: []int{0, 1}},
		{name: "grow never takes reserved CPUs", held: "2-3", reserved: "0-1", req: Request{CPUs: 4}, want: "2-5", wantNodes: []int{0}},
		{name: "full-pcpus grows by whole cores only", held: "0-1", exclusive: "3", req: Request{CPUs: 4, Policy: FullPCPUs}, want: "0-1,4-5", wantNodes: []int{0}},
		{name: "spread grows one thread per core", held: "0", req: Request{CPUs: 3, Policy: SpreadByPCPUs}, want: "0,2,4", wantNodes: []int{0}},
		{name: "grow that cannot fit", held: "0-1", exclusive: "2-15", req: Request{CPUs: 4},
			wantErr: "full-pcpus-then-threads: 2 more CPUs asked beside 0-1, 0 free", wantIs: ErrInsufficient},
		{name: "full-pcpus grow that finds no whole core", held: "0-1", exclusive: "2,4,6,8,10,12,14", req: Request{CPUs: 4, Policy: FullPCPUs},
			wantErr: "full-pcpus: 2 more CPUs asked beside 0-1, 0 free", wantIs: ErrInsufficient},
		{name: "full-pcpus by a thread", held: "0-1", req: Request{CPUs: 3, Policy: FullPCPUs},
			wantErr: "full-pcpus: resizing 2 CPUs to 3 is not a multiple of 2 threads per core", wantIs: ErrInvalidRequest},
		{name: "static-burst is not resized", held: "0-1", req: Request{CPUs: 3, Policy: StaticBurst},
			wantErr: "static-burst: a static-burst set is chosen again, not resized", wantIs: ErrInvalidRequest},
		{name: "held CPU offline", held: "0,40", req: Request{CPUs: 3},
			wantErr: "resize: held cpu 40 is offline or does not exist", wantIs: ErrInvalidRequest},

		// Shrink: whole cores first, the farthest from the set's home first.
		{name: "shrink releases a whole core", held: "0-5", req: Request{CPUs: 4}, want: "0-3", wantNodes: []int{0}},
		{name: "shrink releases the core off its node first", held: "0-5,8-9", req: Request{CPUs: 6}, want: "0-5", wantNodes: []int{0}},
		{name: "shrink releases the core off its L3 group first", held: "0-4,5", req: Request{CPUs: 4}, want: "0-3", wantNodes: []int{0}},
		{name: "shrink releases a core held in part before splitting one", held: "0-3,4", req: Request{CPUs: 4}, want: "0-3", wantNodes: []int{0}},
		{name: "shrink by a thread splits the farthest core", held: "0-3", req: Request{CPUs: 3}, want: "0-2", wantNodes: []int{0}},
		{name: "full-pcpus shrinks by whole cores", held: "0-5", req: Request{CPUs: 2, Policy: FullPCPUs}, want: "0-1", wantNodes: []int{0}},
		{name: "same count keeps the set", held: "3,9", req: Request{CPUs: 2}, want: "3,9", wantNodes: []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := fixture.MustBuild(resizeShape)
			st := State{Exclusive: BitsOf(mustParse(t, tc.exclusive).Union(mustParse(t, tc.held)))}
			held := mustParse(t, tc.held)
			res, err := Resize(topo, st, mustParse(t, tc.reserved), held, tc.req)
			if !checkOutcome(t, res, err, tc.wantErr, tc.wantIs, tc.want, tc.wantNodes) {
				return
			}
			// Keeping: a grow holds every held CPU, a shrink only held ones.
			if !held.IsSubsetOf(res.CPUs) && !res.CPUs.IsSubsetOf(held) {
				t.Fatalf("cpus %s neither keep nor lie within %s", res.CPUs, held)
			}
			if res.CPUs.Size() != tc.req.CPUs {
				t.Fatalf("got %d CPUs, want %d", res.CPUs.Size(), tc.req.CPUs)
			}
		})
	}
}

// TestResizeKeepsProperty grows and shrinks random sets on the shipped
// machines: a grow never drops a held CPU nor takes another's, a shrink
// keeps only held CPUs, and both give exactly the count asked.
func TestResizeKeepsProperty(t *testing.T) {
	for _, shape := range []fixture.Shape{resizeShape, fixture.AMDNPS4, fixture.Intel2S96C} {
		topo := fixture.MustBuild(shape)
		online := topo.CPUSet().List()
		for i := 0; i < 200; i++ {
			// A deterministic spread of held sets, others and counts.
			start, size := (i*7)%len(online), 1+(i*5)%9
			heldIDs := []int{}
			for j := 0; j < size; j++ {
				heldIDs = append(heldIDs, online[(start+j*3)%len(online)])
			}
			held := cpuset.New(heldIDs...)
			others := cpuset.New()
			for j := 0; j < len(online); j += 2 + i%3 {
				if !held.Contains(online[j]) {
					others = others.Union(cpuset.New(online[j]))
				}
			}
			want := 1 + (i*11)%(2*size+4)
			st := State{Exclusive: BitsOf(others.Union(held))}
			res, err := Resize(topo, st, cpuset.New(), held, Request{CPUs: want})
			if errors.Is(err, ErrInsufficient) && want > held.Size() {
				continue
			}
			if err != nil {
				t.Fatalf("%s: resize %s to %d: %v", shape.Name, held, want, err)
			}
			if res.CPUs.Size() != want {
				t.Fatalf("%s: resize %s to %d gave %s", shape.Name, held, want, res.CPUs)
			}
			if want >= held.Size() && (!held.IsSubsetOf(res.CPUs) || !res.CPUs.Difference(held).Intersection(others).IsEmpty()) {
				t.Fatalf("%s: grow %s to %d gave %s (others %s)", shape.Name, held, want, res.CPUs, others)
			}
			if want < held.Size() && !res.CPUs.IsSubsetOf(held) {
				t.Fatalf("%s: shrink %s to %d gave %s", shape.Name, held, want, res.CPUs)
			}
		}
	}
}
