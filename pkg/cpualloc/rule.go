package cpualloc

import (
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// Validate checks a request of CPUs of its own on its own, as Allocate
// would before choosing any: an error matches ErrInvalidRequest.
func (r Request) Validate() error {
	_, err := r.normalised()
	return err
}

// Rule is the rule a set of CPUs chosen on t under policy p follows, as
// Allocate names it in Result.Policy: the default (full-pcpus-then-threads,
// or no policy named) is full-pcpus for a set of whole cores, the others
// are themselves. A decision keeps the policy asked for in its
// assignments (a changed policy is a changed need); a `locus run` lease
// records the rule, so whoever reads the checkpoint knows its accounting.
func Rule(t *topology.Topology, p Policy, cpus cpuset.CPUSet) Policy {
	if p != "" && p != FullPCPUsThenThreads {
		return p
	}
	a, err := allocatorFor(t)
	if err != nil || cpus.IsEmpty() {
		return FullPCPUsThenThreads
	}
	ix := a.ix
	for _, id := range cpus.List() {
		if id >= len(ix.cpuCore) || ix.cpuCore[id] < 0 {
			return FullPCPUsThenThreads
		}
		c := int(ix.cpuCore[id])
		if !ix.wholeCore(c) {
			return FullPCPUsThenThreads
		}
		for _, sib := range ix.cores[c].cpus {
			if !cpus.Contains(sib) {
				return FullPCPUsThenThreads
			}
		}
	}
	return FullPCPUs
}
