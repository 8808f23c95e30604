package agent

import (
	"strings"
	"testing"
)

// A workload's limits.memory caps its cgroup (v1 memory.limit_in_bytes, v2
// memory.max), and the original comes back when the limit leaves the config.
func TestMemoryLimitIsAppliedAndRestored(t *testing.T) {
	for _, k := range treeKinds {
		t.Run(k.name, func(t *testing.T) {
			tree := newCgroupTree(t, k.v, k.anolis, "0-3")
			tree.mkcg("pods/redis", "pods/batch")
			knob, unlimited := "memory.max", "max"
			if k.name[:2] == "v1" {
				knob, unlimited = "memory.limit_in_bytes", "9223372036854771712"
			}
			h := newHarness(t, tree, redisAndBatch, nil)
			h.reconcile()
			if got := tree.file("pods/redis", knob); got != "6442450944" {
				t.Fatalf("redis %s = %s, want limits.memory 6Gi = 6442450944", knob, got)
			}
			if got := tree.file("pods/batch", knob); got != unlimited {
				t.Errorf("batch (no limit) %s = %s, want it untouched", knob, got)
			}
			h.writeConfig(strings.Replace(redisAndBatch, "limits: {cpu: \"2\", memory: 6Gi}", "limits: {cpu: \"2\"}", 1))
			h.reconcile()
			if got := tree.file("pods/redis", knob); got != unlimited {
				t.Fatalf("after the limit left the config, %s = %s, want the original %s", knob, got, unlimited)
			}
		})
	}
}
