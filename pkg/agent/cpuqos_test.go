package agent

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/coresched"
	"github.com/locus-project/locus/pkg/status"
)

// cpuQoSOn turns CPU QoS on for both classes, as the protocol writes it.
const cpuQoSOn = "resourceQOSConfig: {clusterStrategy: {lsClass: {cpuQOS: {enable: true, groupIdentity: 2}}, beClass: {cpuQOS: {enable: true, groupIdentity: -1}}}}\n"

// withCPUIdle gives the fixture kernel cpu.idle: on the v1 cpu root and on
// every cgroup of the tree (v2 has none on the root).
func withCPUIdle(tree *cgroupTree, rels ...string) {
	c := "cpu"
	if tree.v == cgroup.V2 {
		c = ""
	} else {
		tree.set(c, "", "cpu.idle", "0")
	}
	for _, rel := range rels {
		tree.set(c, rel, "cpu.idle", "0")
	}
}

// TestCPUQoSByClass: a BE workload yields (cpu.idle 1, or the lowest weight
// where the kernel has no cpu.idle), LS keeps its weight, on both cgroup
// versions; switched off, every file is back to its original.
func TestCPUQoSByClass(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		for _, idle := range []bool{true, false} {
			t.Run(fmt.Sprintf("%v-idle=%v", v, idle), func(t *testing.T) {
				tree := newCgroupTree(t, v, false, "0-3")
				tree.mkcg("pods/redis", "pods/batch")
				if idle {
					withCPUIdle(tree, "pods", "pods/redis", "pods/batch")
				}
				before := tree.snapshot()
				h := newHarness(t, tree, redisAndBatch+cpuQoSOn, nil)
				h.reconcile()
				weight, lowest, plain := "cpu.shares", "2", "1024"
				if v == cgroup.V2 {
					weight, lowest, plain = "cpu.weight", "1", "100"
				}
				want := map[string]string{"pods/batch/" + weight: lowest, "pods/redis/" + weight: plain}
				if idle {
					want = map[string]string{"pods/batch/cpu.idle": "1", "pods/batch/" + weight: plain,
						"pods/redis/cpu.idle": "0", "pods/redis/" + weight: plain}
				}
				for f, w := range want {
					rel, file := f[:strings.LastIndex(f, "/")], f[strings.LastIndex(f, "/")+1:]
					if got := tree.file(rel, file); got != w {
						t.Errorf("%s = %q, want %q", f, got, w)
					}
				}
				st, err := status.Read(h.opts.StateDir)
				if err != nil {
					t.Fatal(err)
				}
				if len(st.Node.CPUQoS) != 3 || strings.Contains(st.Node.CPUQoS[0], "absent") == idle || !strings.HasPrefix(st.Node.CPUQoS[2], "cpu burst: ") {
					t.Errorf("node cpuQOS lines %q", st.Node.CPUQoS)
				}
				for _, w := range st.Workloads {
					if w.Name == "batch" && (!strings.Contains(w.CPUQOS.Reason, "beClass.cpuQOS: groupIdentity -1") || w.CPUQOS.Values[weight] == "") {
						t.Errorf("batch cpuQOS status %+v", w.CPUQOS)
					}
				}
				if res := h.reconcile(); res.Writes != 0 {
					t.Errorf("a second reconcile wrote %d files", res.Writes)
				}
				// Off: the class's files go back to what they were.
				h.writeConfig(redisAndBatch + strings.Replace(cpuQoSOn, "enable: true, groupIdentity: -1", "enable: false", 1))
				h.reconcile()
				after := tree.snapshot()
				for f, b := range before {
					if strings.Contains(f, "/cpu") && strings.HasPrefix(f[strings.LastIndex(f, "/")+1:], "cpu.") && after[f] != b {
						t.Errorf("%s = %q after disable, want the original %q", f, after[f], b)
					}
				}
			})
		}
	}
}

// TestCPUQoSBadInput: a malformed cpuQOS is a Warning naming the field and
// writes nothing; a bad class writes no CPU QoS file of that workload.
func TestCPUQoSBadInput(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	withCPUIdle(tree, "pods", "pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, nil)
	h.reconcile()
	before := tree.snapshot()
	h.writeConfig(redisAndBatch + strings.Replace(cpuQoSOn, "groupIdentity: -1", "groupIdentity: -3", 1))
	if res := h.reconcile(); res.Writes != 0 {
		t.Errorf("a bad cpuQOS led to %d writes", res.Writes)
	}
	evs := h.events()
	if last := evs[len(evs)-1]; last.Type != "Warning" || !strings.Contains(last.Message, "clusterStrategy.beClass.cpuQOS.groupIdentity: -3") {
		t.Errorf("last event %+v does not name the field", last)
	}
	if !reflect.DeepEqual(before, tree.snapshot()) {
		t.Error("a bad cpuQOS changed the tree")
	}
	bad := strings.Replace(redisAndBatch, "qosClass: BE", "qosClass: BE\n  annotations: {locus.io/core-isolation: maybe}", 1)
	h.writeConfig(bad + cpuQoSOn)
	h.reconcile()
	if got := tree.file("pods/batch", "cpu.idle"); got != "0" {
		t.Errorf("a workload with a bad annotation got cpu.idle %q", got)
	}
	found := false
	for _, e := range h.events() {
		found = found || (e.Reason == "InvalidCPUQOS" && e.Workload == "batch" && strings.Contains(e.Message, "locus.io/core-isolation"))
	}
	if !found {
		t.Error("no InvalidCPUQOS warning naming the annotation")
	}
}

// coreIsolationHarness is an agent whose redis asks for core isolation
// (processes 4242 and 4243) beside batch (5151), on a fake core scheduler.
func coreIsolationHarness(t *testing.T, available bool) (*harness, *fakeCore) {
	asking := strings.Replace(redisAndBatch, `cpuset-scheduler: "true"`, `cpuset-scheduler: "true"`+"\n    locus.io/core-isolation: \"true\"", 1)
	tree := newCgroupTree(t, cgroup.V1, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	for _, c := range tree.controllers() {
		tree.set(c, "pods/redis", "cgroup.procs", "4242\n4243")
		tree.set(c, "pods/batch", "cgroup.procs", "5151")
	}
	core := &fakeCore{available: available}
	return newHarness(t, tree, asking, func(o *Options) { o.CoreSched = core }), core
}

// fakeCore stands in for the kernel's core scheduling.
type fakeCore struct {
	mu        sync.Mutex
	available bool
	isolated  [][]int
	cleared   [][]int
}

func (f *fakeCore) Probe() coresched.Support {
	if f.available {
		return coresched.Support{Available: true, Reason: "available (fake)"}
	}
	return coresched.Support{Reason: "unavailable: fake kernel without CONFIG_SCHED_CORE"}
}
func (f *fakeCore) Isolate(p []int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.isolated = append(f.isolated, p)
	return nil
}
func (f *fakeCore) Clear(p []int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleared = append(f.cleared, p)
	return nil
}

// TestCoreIsolation: the workload that asks gets its processes isolated on
// every reconcile (newcomers too), loses the cookie when it stops asking;
// without core scheduling it is said once and nothing is done.
func TestCoreIsolation(t *testing.T) {
	for _, available := range []bool{true, false} {
		t.Run(fmt.Sprint("available=", available), func(t *testing.T) {
			h, core := coreIsolationHarness(t, available)
			h.reconcile()
			h.reconcile()
			st, _ := status.Read(h.opts.StateDir)
			var redis status.WorkloadStatus
			for _, w := range st.Workloads {
				if w.Name == "redis" {
					redis = w
				}
			}
			if !available {
				if len(core.isolated) != 0 {
					t.Fatalf("isolated %v without core scheduling", core.isolated)
				}
				n := 0
				for _, e := range h.events() {
					if e.Reason == "CoreIsolationUnavailable" {
						n++
					}
				}
				if n != 1 || !strings.Contains(redis.CPUQOS.CoreIsolation, "not applied") || !slices.ContainsFunc(st.Node.CPUQoS, func(s string) bool { return strings.Contains(s, "fake kernel") }) {
					t.Errorf("told %d times; status %q, node %q", n, redis.CPUQOS.CoreIsolation, st.Node.CPUQoS)
				}
				return
			}
			if len(core.isolated) != 2 || !slices.Equal(core.isolated[0], []int{4242, 4243}) {
				t.Fatalf("isolated %v, want redis's processes on each reconcile", core.isolated)
			}
			if !strings.Contains(redis.CPUQOS.CoreIsolation, "share a core scheduling cookie") {
				t.Errorf("status %q", redis.CPUQOS.CoreIsolation)
			}
			h.writeConfig(redisAndBatch)
			h.reconcile()
			if len(core.cleared) != 1 || !slices.Equal(core.cleared[0], []int{4242, 4243}) || len(core.isolated) != 2 {
				t.Errorf("after opting out: cleared %v, isolated %v", core.cleared, core.isolated)
			}
		})
	}
}

// TestCoreIsolationSurvivesRestart: a workload that stops asking for core
// isolation while the agent is down loses its cookie when the agent comes
// back, and one still asking keeps it, as the checkpoint remembers whom
// the agent isolated.
func TestCoreIsolationSurvivesRestart(t *testing.T) {
	h, core := coreIsolationHarness(t, true)
	h.reconcile()
	if got := h.checkpoint().CoreIsolated; !slices.Equal(got, []string{"redis"}) {
		t.Fatalf("checkpoint records %q as isolated, want redis", got)
	}
	h.restart()
	h.reconcile()
	if len(core.cleared) != 0 || len(core.isolated) != 2 {
		t.Fatalf("restarted, still asking: cleared %v, isolated %v", core.cleared, core.isolated)
	}
	h.a.Close()
	h.writeConfig(redisAndBatch) // redis stops asking while no agent runs
	h.restart()
	h.reconcile()
	if len(core.cleared) != 1 || !slices.Equal(core.cleared[0], []int{4242, 4243}) {
		t.Fatalf("restarted after redis stopped asking: cleared %v, want redis's processes", core.cleared)
	}
	if got := h.checkpoint().CoreIsolated; len(got) != 0 {
		t.Errorf("checkpoint still records %q as isolated", got)
	}
}

// TestCoreIsolationRemovedWorkload: a workload of an existing cgroup that
// leaves the configuration keeps running, so it loses its cookie as it
// goes, whether the agent runs then or comes back after.
func TestCoreIsolationRemovedWorkload(t *testing.T) {
	batchOnly := strings.Replace(redisAndBatch, redisAndBatch[strings.Index(redisAndBatch, "- name: redis"):strings.Index(redisAndBatch, "- name: batch")], "", 1)
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprint("restart=", restart), func(t *testing.T) {
			h, core := coreIsolationHarness(t, true)
			h.reconcile()
			if restart {
				h.a.Close()
			}
			h.writeConfig(batchOnly)
			if restart {
				h.restart()
			}
			h.reconcile()
			if len(core.cleared) != 1 || !slices.Equal(core.cleared[0], []int{4242, 4243}) {
				t.Fatalf("redis removed from the configuration: cleared %v, want its processes 4242 and 4243", core.cleared)
			}
			if got := h.checkpoint().CoreIsolated; len(got) != 0 {
				t.Errorf("checkpoint still records %q as isolated", got)
			}
			h.reconcile()
			if len(core.cleared) != 1 {
				t.Errorf("cleared again on the next reconcile: %v", core.cleared)
			}
		})
	}
}
