package locality

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/locus-project/locus/pkg/sloconfig"
)

// Reasons a plan or a process is skipped.
const (
	// ReasonNoTargetNUMA: one NUMA node, or the workload may run on every node.
	ReasonNoTargetNUMA = "no target numa"
	ReasonPolicyNone   = "memory locality policy is none"
)

// ProcessPages is what the planner needs to know about one process.
type ProcessPages struct {
	PID   int
	Pages NodePages // resident base pages per node
	// Held are the pages (a subset of Pages) in mappings whose memory policy
	// keeps them where they are; HeldBy names the first such policy.
	Held   NodePages
	HeldBy string
}

// PlanInput is everything the planner decides from.
type PlanInput struct {
	Policy sloconfig.LocalityPolicy // "" plans as bestEffort; none skips
	Local  []int                    // the nodes of the workload's cpuset
	// Nodes holds every memory node of the machine with its size and free
	// memory, read fresh.
	Nodes     map[int]NodeMemory
	Margin    Margin
	PageSize  uint64 // bytes per base page
	Processes []ProcessPages
}

// Move is a number of pages to move from a remote node to a local one.
type Move struct {
	From, To int
	Pages    uint64
}

// ProcessPlan is what to do with one process.
type ProcessPlan struct {
	PID     int
	Moves   []Move
	Skipped string // why the process is left alone
	Remote  uint64 // pages on remote nodes
	Held    uint64 // remote pages a memory policy keeps in place
}

// Plan says what moves where.
type Plan struct {
	Local     []int
	Skipped   string // the whole workload is left alone (ReasonNoTargetNUMA, ReasonPolicyNone)
	Processes []ProcessPlan
	// Room is how many pages each local node can take before its free memory
	// falls to the margin.
	Room map[int]uint64
	// Stopped lists the local nodes whose margin cut the plan short.
	Stopped []int
}

// Pages is the number of pages the plan moves.
func (p Plan) Pages() uint64 {
	var n uint64
	for _, pp := range p.Processes {
		for _, m := range pp.Moves {
			n += m.Pages
		}
	}
	return n
}

// MakePlan decides, for each process, how many pages move from each remote
// node to each local node. Pages are spread over the local nodes in
// proportion to their room above the margin; when the room is smaller than
// the remote memory the plan is partial and Stopped names the full nodes.
// Processes are planned in pid order, so a partial plan serves the lowest
// pids first.
func MakePlan(in PlanInput) (Plan, error) {
	if err := in.validate(); err != nil {
		return Plan{}, err
	}
	local := slices.Sorted(slices.Values(in.Local))
	local = slices.Compact(local)
	plan := Plan{Local: local, Room: map[int]uint64{}}
	if in.Policy == sloconfig.LocalityNone {
		plan.Skipped = ReasonPolicyNone
		return plan, nil
	}
	remoteNodes := 0
	for id := range in.Nodes {
		if !slices.Contains(local, id) {
			remoteNodes++
		}
	}
	if len(in.Nodes) <= 1 || remoteNodes == 0 {
		plan.Skipped = ReasonNoTargetNUMA
		return plan, nil
	}
	var targets []int // local nodes that have memory
	for _, id := range local {
		nm, ok := in.Nodes[id]
		if !ok {
			continue // a CPU-only node takes no pages
		}
		targets = append(targets, id)
		if margin := in.Margin.For(nm.Total); nm.Free > margin {
			plan.Room[id] = (nm.Free - margin) / in.PageSize
		} else {
			plan.Room[id] = 0
		}
	}
	items, demand := plan.collect(in, local)
	rooms := make([]uint64, len(targets))
	var capacity uint64
	for i, t := range targets {
		rooms[i] = plan.Room[t]
		capacity += rooms[i]
	}
	quota := split(min(demand, capacity), rooms, rooms)
	if demand > capacity {
		plan.Stopped = slices.Clone(targets)
	}
	for _, it := range items {
		pp := &plan.Processes[it.proc]
		left := sum(quota)
		give := split(min(it.pages, left), quota, quota)
		for i, n := range give {
			if n > 0 {
				pp.Moves = addMove(pp.Moves, Move{From: it.from, To: targets[i], Pages: n})
				quota[i] -= n
			}
		}
	}
	return plan, nil
}

type planItem struct {
	proc  int // index in Plan.Processes
	from  int
	pages uint64
}

// collect fills plan.Processes (pid order) and lists the movable remote
// pages per process and node.
func (plan *Plan) collect(in PlanInput, local []int) ([]planItem, uint64) {
	procs := slices.Clone(in.Processes)
	sort.Slice(procs, func(i, j int) bool { return procs[i].PID < procs[j].PID })
	var items []planItem
	var demand uint64
	for _, p := range procs {
		pp := ProcessPlan{PID: p.PID, Remote: p.Pages.Remote(local)}
		var movable uint64
		for _, from := range p.Pages.RemoteNodes(local) {
			held := min(p.Held[from], p.Pages[from])
			pp.Held += held
			if n := p.Pages[from] - held; n > 0 {
				items = append(items, planItem{proc: len(plan.Processes), from: from, pages: n})
				movable += n
			}
		}
		if pp.Remote > 0 && movable == 0 {
			pp.Skipped = fmt.Sprintf("memory policy %s keeps its memory on remote numa", p.HeldBy)
		}
		demand += movable
		plan.Processes = append(plan.Processes, pp)
	}
	return items, demand
}

func (in PlanInput) validate() error {
	if len(in.Local) == 0 {
		return fmt.Errorf("plan: no local numa node given")
	}
	if len(in.Nodes) == 0 {
		return fmt.Errorf("plan: no memory node given")
	}
	if in.PageSize == 0 {
		return fmt.Errorf("plan: page size is 0")
	}
	if in.Policy != "" && in.Policy != sloconfig.LocalityBestEffort && in.Policy != sloconfig.LocalityNone {
		return fmt.Errorf("plan: unknown policy %q", in.Policy)
	}
	for _, id := range slices.Sorted(maps.Keys(in.Nodes)) {
		if nm := in.Nodes[id]; nm.Free > nm.Total {
			return fmt.Errorf("plan: node %d has %d bytes free of %d", id, nm.Free, nm.Total)
		}
	}
	return nil
}

func addMove(moves []Move, m Move) []Move {
	for i := range moves {
		if moves[i].From == m.From && moves[i].To == m.To {
			moves[i].Pages += m.Pages
			return moves
		}
	}
	return append(moves, m)
}
