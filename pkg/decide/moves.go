package decide

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/moveplan"
	"github.com/locus-project/locus/pkg/rebalance"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// MoveInterval is how long a moved workload is left where it went: it is
// not moved again before, so that two waiting workloads cannot push it back
// and forth, and its memory has time to follow.
const MoveInterval = 10 * time.Minute

// ReasonRepinned is the Event of a workload moved to other CPUs so that
// another fits.
const ReasonRepinned = "Repinned"

// Moves is what a decision may move: the node's switch (Config.MovesEnabled)
// and the workloads moved less than MoveInterval ago, which stay put.
type Moves struct {
	Enabled bool
	Recent  map[string]bool
	// Writable are the workloads whose cgroups this decision writes
	// (Observation.Prepared): only those move, since another is given the
	// CPUs they leave at once.
	Writable map[string]bool
	// Resident is Observation.Resident: what moving each costs.
	Resident map[string]map[int]uint64
}

// Move is one workload moved by the decision, so that For fits, or, with
// Rebalance set, to even out the NUMA nodes' use (rebalance.go).
type Move struct {
	moveplan.Move
	For       string
	ForNodes  []int
	Rebalance *rebalance.Move
}

// movable is, by name, the workloads that may move now: the switch on,
// workload.MayMove, not moved recently. Nil when nothing may move.
func (m Moves) movable(kube Kubelet, ws []workload.Workload) map[string]bool {
	if !m.Enabled || kube.Unknown != "" {
		return nil
	}
	out := map[string]bool{}
	for _, w := range ws {
		if ok, _ := workload.MayMove(w, len(kube.pinnedContainers(w)) > 0); ok && !m.Recent[w.Name] && m.Writable[w.Name] {
			out[w.Name] = true
		}
	}
	return out
}

// recentMoves is the workloads of moved still within MoveInterval of now; a
// clock gone back counts as recent. Pruned is moved without the others and
// those with no assignment.
func recentMoves(moved map[string]time.Time, now time.Time, assigned map[string]workload.Assignment) (recent map[string]bool, pruned map[string]time.Time) {
	recent, pruned = map[string]bool{}, map[string]time.Time{}
	for name, at := range moved {
		if _, ok := assigned[name]; ok && now.Sub(at) < MoveInterval {
			recent[name], pruned[name] = true, at
		}
	}
	return recent, pruned
}

// key names what of m the decision depends on, for its input key.
func (m Moves) key() string {
	return strings.Join(slices.Sorted(maps.Keys(m.Recent)), ",") + "\x00" + strings.Join(slices.Sorted(maps.Keys(m.Writable)), ",")
}

// writableMovable are the workloads opted in to moves whose cgroups obs
// says may be written.
func writableMovable(obs Observation) map[string]bool {
	out := map[string]bool{}
	for _, w := range obs.Workloads {
		if w.Movable && obs.Prepared[w.Cgroup] {
			out[w.Name] = true
		}
	}
	return out
}

// planRoom asks the move planner for the moves that let need be placed as
// on an empty machine. The holdings are every assignment made so far; only
// those kept from the assignments in force (still on the CPUs they run on)
// and movable may move. The static-burst ones share their CPUs: they are in
// st, not holdings.
func planRoom(t *topology.Topology, st cpualloc.State, reserved cpuset.CPUSet, out, prev map[string]workload.Assignment,
	holds Holdings, movable map[string]bool, resident map[string]map[int]uint64, need workload.CPUNeed) (moveplan.Plan, error) {
	in := moveplan.Input{State: st, Reserved: reserved, Request: cpualloc.Request{CPUs: need.CPUs, Policy: need.Policy,
		NUMAStrategy: need.NUMAStrategy, RequestMilli: need.RequestMilli, Memory: need.Memory}}
	for _, name := range slices.Sorted(maps.Keys(out)) {
		a := out[name]
		if a.Policy == cpualloc.StaticBurst || a.CPUs.IsEmpty() {
			continue
		}
		p, kept := prev[name]
		in.Holdings = append(in.Holdings, moveplan.Holding{Name: name, CPUs: a.CPUs, Policy: a.Policy,
			Movable: movable[name] && kept && p.CPUs.Equals(a.CPUs), Memory: a.Memory, MemHeld: holds[name], Resident: resident[name]})
	}
	if !slices.ContainsFunc(in.Holdings, func(h moveplan.Holding) bool { return h.Movable }) {
		return moveplan.Plan{}, fmt.Errorf("%w: no workload in the way may move", moveplan.ErrNoMoves)
	}
	return moveplan.Make(t, in)
}

// moveWhy adds to an allocation's refusal why no moves made room, when the
// planner was asked.
func moveWhy(msg string, asked bool, err error) string {
	if !asked || err == nil {
		return msg
	}
	if errors.Is(err, moveplan.ErrNoMoves) {
		return msg + "; no moves make room: " + err.Error()
	}
	return msg + "; moves not planned: " + err.Error()
}

// moveGroup is the nodes a moved workload's memory goes to.
func moveGroup(m moveplan.Move) []int {
	if len(m.MemNodes) > 0 {
		return m.MemNodes
	}
	return m.ToNodes
}

// maxEventMessage bounds a Repinned message: CPU lists of a big machine
// are long, and an Event's message is not the place for them whole.
const maxEventMessage = 1024

// repinnedMessage tells a move: from where to where, for whom, and that
// the memory follows.
func repinnedMessage(m Move) string {
	msg := fmt.Sprintf("moved from CPUs %s (NUMA nodes %v) to CPUs %s (NUMA nodes %v) so that %s fits on NUMA nodes %v; "+
		"its memory follows to NUMA nodes %v (pages migrated by the memory locality worker within its stall budget; cpuset.mems allows the nodes it left too until they have)",
		m.From, m.FromNodes, m.To, m.ToNodes, m.For, m.ForNodes, moveGroup(m.Move))
	if len(msg) > maxEventMessage {
		msg = strings.ToValidUTF8(msg[:maxEventMessage-3], "") + "..."
	}
	return msg
}
