package agent

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
)

// --dry-run on a fresh host shows the cpusets of the cgroups a real run
// would create, not only that it would create them.
func TestDryRunPrintsTheCPUSetsOfCgroupsToCreate(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	before := tree.snapshot()
	h := newHarness(t, tree, commandConfig+"  annotations:\n    koordinator.sh/memoryQOS: '{\"policy\": \"auto\"}'\n", func(o *Options) { o.DryRun = true })
	h.reconcile()
	out := h.out.String()
	for _, want := range []string{"create cgroup locus.slice/cmd", "write locus.slice/cmd cpuset.mems = 0", "write locus.slice/cmd cpuset.cpus = 1-3"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	// The fixture is upstream cgroup v1: no wmark files, so a real run would
	// skip them and the dry run must not promise them.
	if strings.Contains(out, "write locus.slice/cmd memory.wmark") || !strings.Contains(out, "skip locus.slice/cmd memory.wmark_ratio = 95: this kernel has no such file") {
		t.Errorf("dry run output shows a write this kernel cannot take, or hides the skip:\n%s", out)
	}
	if after := tree.snapshot(); len(after) != len(before) {
		t.Errorf("the dry run changed the tree: %d files, then %d", len(before), len(after))
	}
}
