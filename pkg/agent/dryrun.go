package agent

import (
	"fmt"

	"github.com/locus-project/locus/pkg/cgroup"
)

// printUncreated shows, under --dry-run, the writes meant for the cgroups a
// real run would create first (command and match workloads): the writer
// cannot plan them, as there is no file to read yet, but a dry run that left
// out the cpusets would hide the very decision it is asked to show.
func (a *Agent) printUncreated(ops []cgroup.Op, ready map[string]bool, rs []resolved) {
	created := map[string]bool{}
	for _, r := range rs {
		if (r.source == FromCommand || r.source == FromMatch) && !ready[r.cgroup] {
			created[r.cgroup] = true
		}
	}
	for _, op := range ops {
		if created[op.Cgroup] {
			fmt.Fprintf(a.opts.Out, "write %s %s = %s (once created)\n", op.Cgroup, op.Knob, op.Value)
		}
	}
}
