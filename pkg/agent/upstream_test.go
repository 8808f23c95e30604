package agent

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
)

// On an upstream cgroup v1 kernel memory.low and memory.high are absent as
// a matter of course: the warning says v1 has no such files upstream and v2
// has them, not that a vendor extension is missing.
func TestV1WarningSaysMemoryLowIsUpstreamV2(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, nil)
	h.reconcile()
	seen := 0
	for _, e := range h.events() {
		if e.Reason != "KnobUnsupported" || !strings.HasPrefix(e.Message, "memory.low") {
			continue
		}
		seen++
		if !strings.Contains(e.Message, "upstream cgroup v1 has no memory.low file, cgroup v2 has it") || strings.Contains(e.Message, "lacks this") {
			t.Errorf("memory.low warning: %q", e.Message)
		}
	}
	if seen != 1 {
		t.Errorf("%d memory.low warnings, want 1", seen)
	}
}
