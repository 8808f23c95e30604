package execute

import (
	"fmt"

	"github.com/locus-project/locus/pkg/cgroup"
)

// printUncreated shows, under a dry run, the writes meant for the cgroups a
// real run would create first (command and match workloads): the writer
// cannot plan them, as there is no file to read yet, but a dry run that left
// out the cpusets would hide the very decision it is asked to show.
func (e *Executor) printUncreated(ops []cgroup.Op, uncreated map[string]bool) {
	for _, op := range ops {
		if uncreated[op.Cgroup] {
			fmt.Fprintf(e.c.Out, "write %s %s = %s (once created)\n", op.Cgroup, op.Knob, op.Value)
		}
	}
}
