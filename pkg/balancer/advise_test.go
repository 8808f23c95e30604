package balancer

import (
	"strings"
	"testing"
)

func TestAdvise(t *testing.T) {
	cases := []struct {
		name   string
		nodes  int
		busy   []float64
		free   []uint64 // per node; default 8 GiB
		req    Request
		want   string
		fits   bool
		reason string
	}{
		{name: "idle machine: the first node", nodes: 2, req: Request{CPUs: 1, Memory: 100 * mi}, want: "node0", fits: true,
			reason: "node0: 2.0 idle CPUs and 7936Mi free beyond the margin for 1.0 CPUs and 100Mi; busiest at 50% after placing"},
		{name: "more free memory wins a tie", nodes: 2, free: []uint64{4 << 30, 8 << 30}, req: Request{CPUs: 1}, want: "node1", fits: true},
		{name: "the idle node", nodes: 2, busy: []float64{1.5, 0.2}, req: Request{CPUs: 1, Memory: 100 * mi}, want: "node1", fits: true},
		{name: "a whole idle node", nodes: 2, busy: []float64{0.1, 0}, req: Request{CPUs: 2}, want: "node1", fits: true},
		{name: "too many CPUs for one node", nodes: 2, req: Request{CPUs: 3}, want: "node0,node1", fits: true},
		{name: "too much memory for one node", nodes: 2, req: Request{CPUs: 1, Memory: 10 << 30}, want: "node0,node1", fits: true},
		{name: "a pair on the idle socket", nodes: 4, busy: []float64{1.8, 0, 0.5, 0.5}, req: Request{CPUs: 3}, want: "node2,node3", fits: true},
		{name: "nothing fits", nodes: 2, busy: []float64{2, 2}, req: Request{CPUs: 1}, want: "node0,node1", fits: false,
			reason: "no set of partitions has 1.0 idle CPUs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parts, mem := machine(tc.nodes, 2, 8<<30)
			for i, b := range tc.busy {
				parts[i].Busy = b
			}
			for i, f := range tc.free {
				mem[i] = NodeMemory{Total: 16 << 30, Free: f}
			}
			a := Advise(AdviceInput{Partitions: parts, Memory: mem, Distance: twoSockets, MemMargin: 256 * mi}, tc.req)
			mustEqual(t, "partitions", strings.Join(a.Partitions, ","), tc.want)
			mustEqual(t, "fits", a.Fits, tc.fits)
			if !strings.HasPrefix(a.Reason, tc.reason) {
				t.Errorf("reason %q, want it to start with %q", a.Reason, tc.reason)
			}
			if len(a.Nodes) != len(a.Partitions) || a.CPUs.Size() != 2*len(a.Partitions) {
				t.Errorf("nodes %v, cpus %s for %v", a.Nodes, a.CPUs, a.Partitions)
			}
		})
	}
}
