package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/state"
)

// restart closes the harness's agent and opens a new one on the same state.
func (h *harness) restart() {
	h.t.Helper()
	h.a.Close()
	a, err := New(h.opts)
	if err != nil {
		h.t.Fatalf("agent restart: %v", err)
	}
	h.t.Cleanup(a.Close)
	h.a = a
}

func (h *harness) hasEvent(reason string) bool {
	for _, e := range h.events() {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

func softLimitOpts(o *Options) { o.V1SoftLimitForLow = true }

// TestLostOriginalsRestoredFromDefaults loses originals.json after the agent
// changed redis's cgroup: the restarted agent must say so, and removing
// redis must restore its parent's CPUs and the kernel's unlimited soft
// limit, not the values Locus had written.
func TestLostOriginalsRestoredFromDefaults(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, softLimitOpts)
	h.reconcile()
	cpus, soft := tree.file("pods/redis", "cpuset.cpus"), tree.file("pods/redis", "memory.soft_limit_in_bytes")
	if cpus == "0-3" || soft == "9223372036854771712" {
		t.Fatalf("the first reconcile did not change redis: cpus %s, soft limit %s", cpus, soft)
	}
	os.Remove(filepath.Join(h.opts.StateDir, OriginalsFile))
	h.restart()
	h.reconcile()
	if !h.hasEvent("OriginalsLost") {
		t.Error("no OriginalsLost warning")
	}
	h.writeConfig(head + "workloads: []\n")
	h.reconcile()
	if got := tree.file("pods/redis", "cpuset.cpus"); got != "0-3" {
		t.Errorf("redis cpuset.cpus = %s after removal, want its parent's 0-3", got)
	}
	if got := tree.file("pods/redis", "memory.soft_limit_in_bytes"); got != "-1" && got != "9223372036854771712" {
		t.Errorf("redis soft limit = %s after removal, want unlimited", got)
	}
}

// TestCorruptOriginalsStartAndLeaveAlone damages originals.json: the agent
// must start with a warning, keep the file aside, write nothing into the
// cgroups whose originals it no longer knows, and serve new workloads.
func TestCorruptOriginalsStartAndLeaveAlone(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch", "pods/extra")
	h := newHarness(t, tree, redisAndBatch, nil)
	h.reconcile()
	os.WriteFile(filepath.Join(h.opts.StateDir, OriginalsFile), []byte(`{"format":"locus-cgroup-ori`), 0o600)
	tree.set("", "pods/redis", "cpuset.cpus", "3") // drifted: its original is unknown now
	h.restart()
	h.writeConfig(redisAndBatch + "- name: extra\n  cgroup: pods/extra\n  qosClass: BE\n")
	h.reconcile()
	if !h.hasEvent("OriginalsCorrupt") {
		t.Error("no OriginalsCorrupt warning")
	}
	if aside, _ := filepath.Glob(filepath.Join(h.opts.StateDir, OriginalsFile+".corrupt-*")); len(aside) != 1 {
		t.Errorf("corrupt originals not kept aside: %v", aside)
	}
	if got := tree.file("pods/redis", "cpuset.cpus"); got != "3" {
		t.Errorf("redis cpuset.cpus = %s: a file without a known original was written", got)
	}
	if got := tree.file("pods/extra", "cpuset.cpus"); got == "" || got == "0-3" {
		t.Errorf("the new workload was not served: cpuset.cpus %q", got)
	}
}

// TestCorruptCheckpointRebuilt damages checkpoint.json: the next reconcile
// must rebuild it from what it observes and go on, keeping the corrupt file
// aside; a workload dropped meanwhile is still cleaned up.
func TestCorruptCheckpointRebuilt(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, nil)
	batchBefore := tree.file("pods/batch", "cpuset.cpus")
	h.reconcile()
	if tree.file("pods/batch", "cpuset.cpus") == batchBefore {
		t.Fatal("the first reconcile did not change batch")
	}
	os.WriteFile(filepath.Join(h.opts.StateDir, "checkpoint.json"), []byte("{\"version\": 1, \"workl"), 0o600)
	h.writeConfig(redisAndBatch[:len(redisAndBatch)-len("- name: batch\n  cgroup: pods/batch\n  qosClass: BE\n")])
	h.reconcile()
	h.reconcile()
	ck, err := (&state.Store{Dir: h.opts.StateDir}).Load()
	if err != nil {
		t.Fatalf("checkpoint after the rebuild: %v", err)
	}
	if _, ok := ck.Workloads["redis"]; !ok || len(ck.Workloads) != 1 || ck.Assignments["redis"].CPUs.Size() != 2 {
		t.Errorf("rebuilt checkpoint: %+v", ck)
	}
	if aside, _ := filepath.Glob(filepath.Join(h.opts.StateDir, "checkpoint.json.corrupt-*")); len(aside) != 1 {
		t.Errorf("corrupt checkpoint not kept aside: %v", aside)
	}
	if !h.hasEvent("CheckpointRebuilt") {
		t.Error("no CheckpointRebuilt warning")
	}
	if got := tree.file("pods/batch", "cpuset.cpus"); got != batchBefore {
		t.Errorf("dropped workload batch not restored: cpuset.cpus %s, original %s", got, batchBefore)
	}
}
