package balancer

import (
	"time"

	"k8s.io/utils/cpuset"
)

// Partition is a set of CPUs groups are balanced between: the CPUs of one
// NUMA node or one L3 cache that are in the pool being balanced.
type Partition struct {
	Name  string        // "node0", "l3-2": stable across restarts
	CPUs  cpuset.CPUSet // never empty
	Nodes []int         // the memory nodes local to these CPUs
	// Busy is the CPU time used on CPUs over the last window, in CPUs
	// (1.5 = one and a half CPUs busy), by everything that ran there.
	Busy float64
}

// Capacity is the partition's CPU count.
func (p Partition) Capacity() float64 { return float64(p.CPUs.Size()) }

// NodeMemory is one NUMA node's memory, in bytes.
type NodeMemory struct {
	Total, Free uint64
}

// Group is one cgroup being balanced, as measured over the last window.
type Group struct {
	Name string
	// CPU is the CPU time the group used over the window, in CPUs.
	CPU float64
	// Mem is its resident memory by NUMA node, in bytes.
	Mem map[int]uint64
	// Threads is its task count; 0 when unknown. A group never uses more
	// CPUs than it has threads.
	Threads int
	// Current is the cpuset.cpus it ran with during the window.
	Current cpuset.CPUSet
	// Allowed are the CPUs it may be given (its pool); empty allows every
	// CPU of every partition.
	Allowed cpuset.CPUSet
}

// MemTotal is the group's resident memory on all nodes.
func (g Group) MemTotal() uint64 {
	var n uint64
	for _, b := range g.Mem {
		n += b
	}
	return n
}

// Input is one interval's measurements.
type Input struct {
	Now        time.Time
	Partitions []Partition
	// Distance is the SLIT distance between two NUMA nodes; nil treats every
	// pair of different nodes alike.
	Distance func(a, b int) int
	Memory   map[int]NodeMemory // by node
	Groups   []Group
}

// Config tunes the balancer; DefaultConfig gives the defaults.
type Config struct {
	// MinDwell is how long a group stays where it was placed before it may
	// move again.
	MinDwell time.Duration
	// MaxMoves bounds the groups moved per interval (numad moves one
	// process per scan). Groups placed for the first time are not moves.
	MaxMoves int
	// MinWindows is how many windows a group is measured in before its
	// first placement: one window of a group just started, or just given
	// a new cpuset, says little about its load.
	MinWindows int
	// MinGain is the least improvement, in CPUs, of the imbalance score a
	// move must bring; below it the group stays (hysteresis).
	MinGain float64
	// MemWeight is the score, in CPUs, of every GiB a placement leaves on
	// nodes that are not the group's: memory stays put unless moving it pays.
	MemWeight float64
	// Smoothing is the weight of the newest window in the loads the
	// decision uses (an exponential average); 1 uses the last window only.
	Smoothing float64
	// Overflow lets the groups of a saturated partition use every CPU of
	// their pool while some other partition has room: no CPU idles while
	// work waits. It starts when a partition's predicted load reaches
	// OverflowOn of its CPUs and stops below OverflowOff.
	Overflow                bool
	OverflowOn, OverflowOff float64
	// MemMargin is the free memory a node keeps: a placement whose memory
	// would eat into it is not considered.
	MemMargin uint64
}

// DefaultConfig is the configuration the agent starts with.
func DefaultConfig() Config {
	return Config{MinDwell: time.Minute, MaxMoves: 1, MinWindows: 3, MinGain: 0.25, MemWeight: 0.25, Smoothing: 0.5,
		Overflow: true, OverflowOn: 0.95, OverflowOff: 0.75, MemMargin: 256 << 20}
}

// State is what the balancer remembers between intervals; Place returns
// the next one. Its zero value is a fresh start.
type State struct {
	Groups map[string]GroupState `json:"groups,omitempty"`
	// Background is the smoothed load of what is not balanced, by partition.
	Background map[string]float64 `json:"background,omitempty"`
	// Overflow lists the partitions whose groups overflow now.
	Overflow map[string]bool `json:"overflow,omitempty"`
}

// GroupState is one group's placement.
type GroupState struct {
	Partitions []string  `json:"partitions,omitempty"` // empty: not placed
	Since      time.Time `json:"since"`                // when it was placed or last moved
	Load       float64   `json:"load"`                 // smoothed CPUs
	Windows    int       `json:"windows"`              // windows measured, up to MinWindows
}

// Plan is one interval's outcome.
type Plan struct {
	State      State
	Placements []Placement // one per group, by name
	Moves      []Move      // groups placed or moved this interval
	Partitions []PartitionLoad
}

// Placement is where a group runs.
type Placement struct {
	Group      string
	Partitions []string      // empty: not placed (it keeps its pool)
	CPUs       cpuset.CPUSet // for cpuset.cpus: its partitions' CPUs, or its pool when overflowing
	Nodes      []int         // for cpuset.mems: its partitions' nodes
	Overflow   bool
	Load       float64 // smoothed CPUs
	// LocalPercent is the share of its memory on Nodes, rounded down; 100
	// when it has none.
	LocalPercent int
}

// Move is a group placed or moved, and why.
type Move struct {
	Group    string
	From, To []string // From is empty for a first placement
	Reason   string
}

// PartitionLoad is a partition as the decision leaves it.
type PartitionLoad struct {
	Name      string
	Capacity  float64 // CPUs
	Predicted float64 // CPUs: background plus its groups' loads
	Groups    []string
	Overflow  bool
}
