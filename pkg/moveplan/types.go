// Package moveplan plans the moves of pinned workloads that let a request
// the allocator cannot place with its usual preferences (one NUMA node, whole
// cores) be placed so. It is pure: the topology, the occupancy, the
// holdings and the request in; the moves, in the order to carry them out,
// out. Every placement it considers is the allocator's (pkg/cpualloc).
package moveplan

import (
	"errors"
	"fmt"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cpualloc"
)

// Bounds of the search, so that a hostile state (many holdings, many nodes)
// cannot make planning run long. Beyond them the plan is the best found, or
// none, and says the bound was reached.
const (
	// MaxHoldings is how many holdings an input may name.
	MaxHoldings = 1024
	// MaxDomains is how many groups of nodes are tried as the request's
	// target; with more, those with the most free CPUs are tried.
	MaxDomains = 64
	// MaxCandidates is how many movable workloads are considered per target
	// group: those with the fewest CPUs there. Subsets of them are 2^16 at most.
	MaxCandidates = 16
	// MaxOrdered is the largest set of moves tried in every order; a larger
	// set is tried largest workload first only.
	MaxOrdered = 4
	// MaxPlacements bounds the allocator calls of one plan.
	MaxPlacements = 200_000
)

// ErrNoMoves matches (errors.Is) a plan that found no moves making the
// request fit; its text says why.
var ErrNoMoves = errors.New("no moves make the request fit")

// ErrInvalid matches an input the planner refuses: holdings that overlap,
// name CPUs the machine lacks, or repeat a name.
var ErrInvalid = errors.New("invalid move plan input")

type planError struct {
	kind error
	msg  string
}

func (e *planError) Error() string        { return e.msg }
func (e *planError) Is(target error) bool { return target == e.kind }

func noMovesf(format string, args ...any) error {
	return &planError{ErrNoMoves, fmt.Sprintf(format, args...)}
}

func invalidf(format string, args ...any) error {
	return &planError{ErrInvalid, fmt.Sprintf(format, args...)}
}

// Holding is a workload holding CPUs exclusively.
type Holding struct {
	Name string
	CPUs cpuset.CPUSet
	// Movable says the workload may be re-placed (see workload.MayMove for
	// who may); an immovable holding keeps its CPUs whatever it costs.
	Movable bool
	// Policy is the policy it was placed with ("" the default); a move
	// re-places it with the same, or full-pcpus when it holds whole cores.
	Policy cpualloc.Policy
	// Memory is its memory request, and MemHeld what State.Free counts it
	// holding on each node: a move takes Memory on the new nodes and gives
	// MemHeld back. Both empty when memory is not accounted.
	Memory  cpualloc.Memory
	MemHeld map[int]cpualloc.Memory
	// Resident is its resident memory in bytes on each node, when known: what
	// a move migrates from the nodes it leaves.
	Resident map[int]uint64
}

// Input is what a plan is made from.
type Input struct {
	// State is the occupancy: the holdings' CPUs are counted taken whether
	// or not State.Exclusive names them.
	State    cpualloc.State
	Reserved cpuset.CPUSet
	Holdings []Holding
	Request  cpualloc.Request
}

// Move re-places one workload. Its To CPUs are free once the moves before
// it in the plan are done, and never overlap From: the executor takes To
// first, then migrates the memory, then gives From back.
type Move struct {
	Workload  string
	From, To  cpuset.CPUSet
	FromNodes []int
	ToNodes   []int
	// MemNodes is the moved workload's new cpuset.mems.
	MemNodes []int
	// Bytes is its resident memory on the nodes it leaves.
	Bytes uint64
}

// Cost orders plans: fewer CPUs moved first, then fewer resident bytes to
// migrate, then fewer workloads moved.
type Cost struct {
	CPUs      int
	Bytes     uint64
	Workloads int
}

// Less says whether c is cheaper than o.
func (c Cost) Less(o Cost) bool {
	if c.CPUs != o.CPUs {
		return c.CPUs < o.CPUs
	}
	if c.Bytes != o.Bytes {
		return c.Bytes < o.Bytes
	}
	return c.Workloads < o.Workloads
}

// Plan is the moves to carry out in order, then the request's placement.
type Plan struct {
	Moves  []Move
	Result cpualloc.Result
	Cost   Cost
	// Bounded says a search bound was reached: the plan is the cheapest
	// found, not proven the cheapest.
	Bounded bool
}
