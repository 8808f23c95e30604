package packing

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Allocator is one node's exclusive CPU allocator under test. It keeps its own
// occupancy: the simulation only tells it who arrives and who leaves.
type Allocator interface {
	Name() string
	// WholeCores reports whether it serves a request for n CPUs with whole
	// physical cores only; it decides which free CPUs count as room for it.
	WholeCores(n int) bool
	// Free returns the CPUs it could still hand out.
	Free() cpuset.CPUSet
	// Allocate admits pod id with n CPUs, or refuses it with an error.
	Allocate(id, n int) (cpuset.CPUSet, error)
	// Release frees an admitted pod's CPUs.
	Release(id int) error
}

// Miss is an admitted pod that spanned several NUMA nodes although one node
// had room for it, with what reproduces it: the CPUs other pods held, the
// CPUs the allocator had free, and the request.
type Miss struct {
	Pod   int
	CPUs  int
	Taken cpuset.CPUSet
	Free  cpuset.CPUSet
	Got   cpuset.CPUSet
	Nodes int
}

// Result is what one allocator did with one stream.
type Result struct {
	Allocator string
	Admitted  int
	Rejected  int
	// RejectedFree counts pods refused although at least as many CPUs as
	// they asked for were free: CPUs lost to fragmentation or alignment rules.
	RejectedFree  int
	CPUsAdmitted  int
	CPUsRequested int
	// Room[d] counts admitted pods for which one instance of domain d had
	// room; Inside[d] those of them placed inside one instance.
	Room       [domains]int
	Inside     [domains]int
	CoreShared int // admitted onto a core another pod (or the reserved CPUs) already used
	Latencies  []time.Duration
	Misses     []Miss // up to MaxMisses NUMA misses, oldest first
	MissCount  int
}

// MaxMisses bounds the misses a Result keeps as reproducers.
const MaxMisses = 3

// Run replays events against a. It fails if a hands out a CPU it does not
// have free, the wrong number of CPUs, or a CPU twice: the figures of an
// allocator that breaks its contract mean nothing.
func Run(t *topology.Topology, a Allocator, events []Event) (Result, error) {
	g := newGeometry(t)
	res := Result{Allocator: a.Name()}
	held := map[int]cpuset.CPUSet{}
	taken := cpuset.New() // what the simulation saw handed out, whatever a says
	for _, ev := range events {
		if !ev.Arrive {
			if _, ok := held[ev.Pod]; ok {
				if err := a.Release(ev.Pod); err != nil {
					return res, fmt.Errorf("%s: release pod %d: %w", a.Name(), ev.Pod, err)
				}
				taken = taken.Difference(held[ev.Pod])
				delete(held, ev.Pod)
			}
			continue
		}
		free := a.Free()
		usable := g.usable(free, a.WholeCores(ev.CPUs))
		res.CPUsRequested += ev.CPUs
		start := time.Now()
		got, err := a.Allocate(ev.Pod, ev.CPUs)
		res.Latencies = append(res.Latencies, time.Since(start))
		if err != nil {
			res.Rejected++
			if free.Size() >= ev.CPUs {
				res.RejectedFree++
			}
			continue
		}
		if got.Size() != ev.CPUs || !got.IsSubsetOf(free) || got.Intersection(taken).Size() > 0 {
			return res, fmt.Errorf("%s: pod %d asked %d CPUs from free %s and got %s while %s were taken",
				a.Name(), ev.Pod, ev.CPUs, free, got, taken)
		}
		held[ev.Pod] = got
		taken = taken.Union(got)
		res.Admitted++
		res.CPUsAdmitted += ev.CPUs
		if g.sharesCore(got, free) {
			res.CoreShared++
		}
		for d := Domain(0); d < domains; d++ {
			if !g.room(usable, d, ev.CPUs) {
				continue
			}
			res.Room[d]++
			if span := g.span(got, d); span == 1 {
				res.Inside[d]++
			} else if d == NUMA {
				res.MissCount++
				if len(res.Misses) < MaxMisses {
					res.Misses = append(res.Misses, Miss{Pod: ev.Pod, CPUs: ev.CPUs, Taken: taken.Difference(got), Free: free, Got: got, Nodes: span})
				}
			}
		}
	}
	return res, nil
}

// Percentile returns the p-th percentile (0..100) of the decision latencies.
func (r Result) Percentile(p float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	sorted := slices.Clone(r.Latencies)
	slices.Sort(sorted)
	i := int(p / 100 * float64(len(sorted)-1))
	return sorted[i]
}

// MeanLatency is the mean time of one decision.
func (r Result) MeanLatency() time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	var sum time.Duration
	for _, l := range r.Latencies {
		sum += l
	}
	return sum / time.Duration(len(r.Latencies))
}

// InsideShare is the share (0..1) of admitted pods with room in one instance
// of d that were placed inside one; 1 when no pod had room.
func (r Result) InsideShare(d Domain) float64 {
	if r.Room[d] == 0 {
		return 1
	}
	return float64(r.Inside[d]) / float64(r.Room[d])
}
