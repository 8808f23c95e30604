package decide

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/rebalance"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// skewed is x and y (two CPUs each) on node 0 and z on node 1, with moves
// and rebalancing switched as given; movable names the workloads opted in.
func skewed(moves, rebalancing bool, movable ...string) (Observation, Memory) {
	cfg := &workload.Config{Host: &hostconfig.HostConfig{}, Reserved: cpuset.New(), BEPool: cpuset.New(),
		MovesEnabled: moves, Rebalance: rebalancing}
	obs := Observation{Topology: fixture.MustBuild(twoNodes16), Config: cfg, Prepared: map[string]bool{}, Now: moveNow}
	mem := Memory{Assignments: map[string]workload.Assignment{}}
	for name, held := range map[string]cpuset.CPUSet{"x": cpuset.New(0, 1), "y": cpuset.New(2, 3), "z": cpuset.New(8, 9)} {
		wl := testWorkload(name, 2, true, false, nil)
		wl.CPU.Memory = cpualloc.Memory{Bytes: 1 << 30}
		wl.Movable = slices.Contains(movable, name)
		obs.Workloads = append(obs.Workloads, wl)
		obs.Prepared[wl.Cgroup] = true
		mem.Assignments[name] = workload.Assignment{CPUs: held, Policy: wl.CPU.Policy, Memory: wl.CPU.Memory}
	}
	slices.SortFunc(obs.Workloads, func(a, b workload.Workload) int { return strings.Compare(a.Name, b.Name) })
	return obs, mem
}

// runBusy decides samples times, rebalance.Default.SampleEvery apart, with
// each workload using use CPUs (by name), carrying the memory along as
// the agent does; it returns the workloads told Repinned, as name@sample,
// and the last Ready.
func runBusy(obs Observation, mem Memory, use map[string]float64, samples int) ([]string, Ready) {
	used := map[string]time.Duration{}
	var moves []string
	var r Ready
	for i := 1; i <= samples; i++ {
		obs.Now = obs.Now.Add(rebalance.Default.SampleEvery)
		obs.Usage = map[string]time.Duration{}
		for name, u := range use {
			used[name] += time.Duration(u * float64(rebalance.Default.SampleEvery))
			obs.Usage[name] = used[name]
		}
		r = Decide(obs, mem)
		for _, e := range r.Events {
			if e.Reason == ReasonRepinned {
				moves = append(moves, e.Workload+"@"+string(rune('0'+i)))
			}
		}
		mem = r.Memory
	}
	return moves, r
}

func TestDecideRebalance(t *testing.T) {
	busy := map[string]float64{"x": 2, "y": 2, "z": 0}
	for _, tc := range []struct {
		name               string
		moves, rebalancing bool
		movable            []string
		use                map[string]float64
		want               []string
		onNode1            string // the workload on node 1 at the end, beside z
	}{
		{name: "node 0 busy for a sustained time: one workload moves to node 1", moves: true, rebalancing: true,
			movable: []string{"x", "y"}, use: busy, want: []string{"x@4"}, onNode1: "x"},
		{name: "only y may move: y", moves: true, rebalancing: true,
			movable: []string{"y"}, use: busy, want: []string{"y@4"}, onNode1: "y"},
		{name: "x would turn the imbalance round: y moves", moves: true, rebalancing: true,
			movable: []string{"x", "y"}, use: map[string]float64{"x": 2, "y": 1, "z": 0}, want: []string{"y@4"}, onNode1: "y"},
		{name: "immovable only: nothing", moves: true, rebalancing: true, use: busy},
		{name: "rebalancing off: nothing", moves: true, movable: []string{"x", "y"}, use: busy},
		{name: "moves off: nothing", rebalancing: true, movable: []string{"x", "y"}, use: busy},
		{name: "balanced use: nothing", moves: true, rebalancing: true, movable: []string{"x", "y"},
			use: map[string]float64{"x": 0.5, "y": 0.5, "z": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, mem := skewed(tc.moves, tc.rebalancing, tc.movable...)
			got, r := runBusy(obs, mem, tc.use, 9)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Repinned %v, want %v", got, tc.want)
			}
			node1 := cpuset.New(8, 9, 10, 11, 12, 13, 14, 15)
			for name, a := range r.Desired.Assignments {
				if on := a.CPUs.IsSubsetOf(node1); on != (name == "z" || name == tc.onNode1) || a.CPUs.Size() != 2 {
					t.Errorf("%s on CPUs %s at the end (all %v)", name, a.CPUs, r.Desired.Assignments)
				}
			}
		})
	}
}

// The Event says why: the nodes' use, and that the memory follows; the
// move is remembered against MoveInterval as a move to make room is, and
// written first (Desired.Moves).
func TestDecideRebalanceEvent(t *testing.T) {
	obs, mem := skewed(true, true, "x", "y")
	used := map[string]time.Duration{}
	for i := 1; i <= 4; i++ {
		obs.Now = obs.Now.Add(rebalance.Default.SampleEvery)
		obs.Usage = map[string]time.Duration{}
		for name, u := range map[string]float64{"x": 2, "y": 2} {
			used[name] += time.Duration(u * float64(rebalance.Default.SampleEvery))
			obs.Usage[name] = used[name]
		}
		obs.Usage["z"] = 0
		r := Decide(obs, mem)
		mem = r.Memory
		if i < 4 {
			continue
		}
		if len(r.Desired.Moves) != 1 || r.Desired.Moves[0].Workload != "x" || !r.Memory.Moved["x"].Equal(obs.Now) || !r.Save {
			t.Fatalf("moves %+v, remembered %v, saved %v", r.Desired.Moves, r.Memory.Moved, r.Save)
		}
		var msg string
		for _, e := range r.Events {
			if e.Reason == ReasonRepinned {
				msg = e.Message
			}
		}
		for _, part := range []string{"to even out", "4.0 CPUs on node 0", "0.0 on node 1", "memory follows to NUMA nodes [1]"} {
			if !strings.Contains(msg, part) {
				t.Errorf("Repinned %q does not say %q", msg, part)
			}
		}
	}
}
