package execute

import (
	"fmt"

	"github.com/locus-project/locus/pkg/cgroup"
)

// printUncreated shows, under a dry run, the writes meant for the cgroups a
// real run would create first (command and match workloads): the writer
// cannot plan them, as there is no file to read yet, but a dry run that left
// out the cpusets would hide the very decision it is asked to show. A knob
// this kernel has no file for is shown as skipped, as a real run would skip
// it (memory.low on upstream cgroup v1), never as a write.
func (e *Executor) printUncreated(ops []cgroup.Op, uncreated map[string]bool) {
	has := map[cgroup.Knob]bool{}
	for _, op := range ops {
		if !uncreated[op.Cgroup] {
			continue
		}
		ok, seen := has[op.Knob]
		if !seen {
			ok = e.c.Hierarchy == nil || e.c.Hierarchy.KernelHas(op.Knob)
			has[op.Knob] = ok
		}
		if !ok {
			fmt.Fprintf(e.c.Out, "skip %s %s = %s: this kernel has no such file\n", op.Cgroup, op.Knob, op.Value)
			continue
		}
		fmt.Fprintf(e.c.Out, "write %s %s = %s (once created)\n", op.Cgroup, op.Knob, op.Value)
	}
}
