package core

import (
	"fmt"
	"maps"
	"slices"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// maxBurstSharers bounds how many static-burst holdings a report's CPUs
// carry, on average per CPU: static-burst pods share CPUs, but no more of
// them than a node runs pods (the kubelet's maxPods defaults to 110).
const maxBurstSharers = 256

// readHoldings reads a report's holdings within a budget sized from the
// node the report describes (its CPUs): the exclusive holdings together
// name at most the node's CPUs, as no CPU is held alone twice, and the
// static-burst ones at most maxBurstSharers times them. Every list is
// counted before any is expanded, so a report over budget (8,192 holdings
// of "0-8191" kept 2.3 GiB) is refused having made nothing; the error
// names the holding. The holdings are read in name order, so the same
// report always gets the same error.
func readHoldings(ct nrt.CPUTopology, into map[string]workload.Assignment) error {
	n := len(ct.CPUs)
	excl := topology.NewCPUBudget(n, fmt.Sprintf("exclusive holdings name at most the node's %d CPUs", n))
	for _, name := range slices.Sorted(maps.Keys(ct.Exclusive)) {
		if _, err := excl.Charge(ct.Exclusive[name]); err != nil {
			return fmt.Errorf("exclusive[%s]: %v", topology.Quote(name), err)
		}
	}
	burst := topology.NewCPUBudget(n*maxBurstSharers, fmt.Sprintf("static-burst holdings share each of the node's %d CPUs at most %d times", n, maxBurstSharers))
	for _, name := range slices.Sorted(maps.Keys(ct.StaticBurst)) {
		b := ct.StaticBurst[name]
		// A request is a pod's summed CPU requests: never negative, and
		// no pod asks more than the largest machine has.
		if b.RequestMilli < 0 || b.RequestMilli > maxRequestMilli {
			return fmt.Errorf("staticBurst[%s].requestMilli: %d is outside 0..%d", topology.Quote(name), b.RequestMilli, maxRequestMilli)
		}
		if _, err := burst.Charge(b.CPUs); err != nil {
			return fmt.Errorf("staticBurst[%s].cpus: %v", topology.Quote(name), err)
		}
	}
	for name, cpus := range ct.Exclusive {
		set, err := topology.ParseCPUList(cpus) // counted above: it parses
		if err != nil {
			return fmt.Errorf("exclusive[%s]: %v", topology.Quote(name), err)
		}
		into[name] = workload.Assignment{CPUs: set, Policy: cpualloc.FullPCPUs}
	}
	for name, b := range ct.StaticBurst {
		set, err := topology.ParseCPUList(b.CPUs)
		if err != nil {
			return fmt.Errorf("staticBurst[%s].cpus: %v", topology.Quote(name), err)
		}
		into[name] = workload.Assignment{CPUs: set, Policy: cpualloc.StaticBurst, RequestMilli: b.RequestMilli}
	}
	return nil
}
