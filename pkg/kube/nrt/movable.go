package nrt

import (
	"fmt"
	"strconv"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// AttributeMovableCPUs is the zone attribute counting the zone's CPUs held
// by pinned workloads that may move (workload.MayMove): CPUs a scheduler
// may count on after the agent moves those workloads elsewhere. Absent
// when none are, so a node without movable workloads publishes what it did
// before the attribute existed.
const AttributeMovableCPUs = "locus.io/movable-cpus"

// movableCPUs is the zone attribute of node n: how many of its CPUs the
// assignments named in movable hold. Static-burst holdings never move (their
// CPUs are shared), so they never count.
func movableCPUs(n topology.NUMANode, assignments map[string]workload.Assignment, movable map[string]bool) []Attribute {
	count := 0
	for name, a := range assignments {
		if movable[name] && a.Policy != cpualloc.StaticBurst {
			count += a.CPUs.Intersection(n.CPUs).Size()
		}
	}
	if count == 0 {
		return nil
	}
	return []Attribute{{Name: AttributeMovableCPUs, Value: strconv.Itoa(count)}}
}

// ReadMovableCPUs reads a zone's AttributeMovableCPUs: 0 when absent. The
// value is a decimal count no larger than cpus, the zone's CPUs: a report
// is text from a node, and a count it cannot have is refused with an error
// naming the zone, rather than believed.
func ReadMovableCPUs(z Zone, cpus int) (int, error) {
	found := false
	count := 0
	for _, a := range z.Attributes {
		if a.Name != AttributeMovableCPUs {
			continue
		}
		if found {
			return 0, fmt.Errorf("zone %s: attribute %s given twice", topology.Quote(z.Name), AttributeMovableCPUs)
		}
		found = true
		// Seven digits are far above any machine's CPUs: a longer value
		// is refused before it is parsed.
		n, err := strconv.Atoi(a.Value)
		if len(a.Value) > 7 || err != nil || n < 0 || n > cpus {
			return 0, fmt.Errorf("zone %s: attribute %s: %s is not a count of CPUs from 0 to the zone's %d",
				topology.Quote(z.Name), AttributeMovableCPUs, topology.Quote(a.Value), cpus)
		}
		count = n
	}
	return count, nil
}
