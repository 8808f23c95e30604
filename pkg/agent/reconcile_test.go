package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

const head = "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPUs: \"0\"\n"

// redisAndBatch is the seed's redis example (LS, request 2Gi, limit 6Gi,
// memory QoS auto with memory.low = request and throttling at 80 %, bound to
// 2 CPUs) next to a BE batch job.
const redisAndBatch = head + `workloads:
- name: redis
  cgroup: pods/redis
  qosClass: LS
  resources:
    requests: {cpu: "2", memory: 2Gi}
    limits: {cpu: "2", memory: 6Gi}
  annotations:
    cpuset-scheduler: "true"
    koordinator.sh/memoryQOS: '{"policy": "auto", "lowLimitPercent": 100, "throttlingPercent": 80}'
- name: batch
  cgroup: pods/batch
  qosClass: BE
`

var treeKinds = []struct {
	name   string
	v      cgroup.Version
	anolis bool
}{{"v1", cgroup.V1, false}, {"v1-anolis", cgroup.V1, true}, {"v2", cgroup.V2, false}, {"v2-anolis", cgroup.V2, true}}

func TestReconcileWritesCPUsAndMemoryQoS(t *testing.T) {
	for _, k := range treeKinds {
		t.Run(k.name, func(t *testing.T) {
			tree := newCgroupTree(t, k.v, k.anolis, "0-3")
			tree.mkcg("pods/redis", "pods/batch")
			h := newHarness(t, tree, redisAndBatch, nil)
			res := h.reconcile()
			if res.Writes == 0 {
				t.Fatal("first reconcile wrote nothing")
			}
			redis := h.checkpoint().Assignments["redis"].CPUs
			if redis.Size() != 2 || redis.Contains(0) {
				t.Fatalf("redis assigned %q: want 2 CPUs, not the reserved 0", redis)
			}
			if got := tree.file("pods/redis", "cpuset.cpus"); got != redis.String() {
				t.Errorf("redis cpuset.cpus = %q, want %q", got, redis)
			}
			shared := cpuset.New(1, 2, 3).Difference(redis).String()
			if got := tree.file("pods/batch", "cpuset.cpus"); got != shared {
				t.Errorf("batch cpuset.cpus = %q, want the shared pool %q", got, shared)
			}
			for _, cg := range []string{"pods/redis", "pods/batch"} {
				if got := tree.file(cg, "cpuset.mems"); got != "0" {
					t.Errorf("%s cpuset.mems = %q, want 0", cg, got)
				}
			}
			// memory.low = request; memory.high = 80 % of the limit.
			want := map[string]string{"memory.low": "2147483648", "memory.high": "5153960755", "memory.min": "0"}
			if k.anolis {
				want["memory.wmark_ratio"], want["memory.wmark_min_adj"] = "95", "-25"
			}
			if k.v == cgroup.V1 && !k.anolis {
				want = map[string]string{"memory.low": "", "memory.high": "", "memory.wmark_ratio": ""}
			}
			for file, v := range want {
				if got := tree.file("pods/redis", file); got != v {
					t.Errorf("redis %s = %q, want %q", file, got, v)
				}
			}
			if got := tree.file("pods/batch", "memory.low"); k.anolis && got != "0" {
				t.Errorf("batch memory.low = %q: BE without memory QoS must stay 0", got)
			}
			unsupported := 0
			for _, e := range h.events() {
				if e.Reason == "KnobUnsupported" {
					unsupported++
					if !strings.Contains(e.Message, "not supported by this kernel") {
						t.Errorf("unsupported event %q does not say why", e.Message)
					}
				}
			}
			if (unsupported > 0) == k.anolis || (k.v == cgroup.V2 && !k.anolis && unsupported != 2) {
				t.Errorf("%d KnobUnsupported events (anolis=%v)", unsupported, k.anolis)
			}
			if res := h.reconcile(); res.Writes != 0 {
				t.Errorf("second reconcile wrote %d files, want 0", res.Writes)
			}
			st, err := status.Read(h.opts.StateDir)
			if err != nil || len(st.Workloads) != 2 || st.Workloads[0].Pool != "exclusive" || st.Workloads[1].Pool != "be" {
				t.Fatalf("status = %+v, %v", st, err)
			}
			if v := st.Workloads[0].MemoryQOS.Values["memory.low"]; (k.v == cgroup.V2 || k.anolis) && v != "2147483648" {
				t.Errorf("status memory.low = %q, want the value read back", v)
			}
		})
	}
}

func TestConfigChangeMovesOnlyWhatChanged(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, true, "0-3")
	tree.mkcg("pods/redis", "pods/batch", "pods/web")
	h := newHarness(t, tree, redisAndBatch, nil)
	h.reconcile()
	redis := h.checkpoint().Assignments["redis"].CPUs
	h.writeConfig(redisAndBatch + `- name: web
  cgroup: pods/web
  resources: {limits: {cpu: "1"}}
  annotations: {cpuset-scheduler: "true"}
`)
	h.reconcile()
	as := h.checkpoint().Assignments
	if !as["redis"].CPUs.Equals(redis) {
		t.Fatalf("redis moved from %s to %s", redis, as["redis"].CPUs)
	}
	web := cpuset.New(1, 2, 3).Difference(redis)
	if !as["web"].CPUs.Equals(web) {
		t.Fatalf("web got %s, want the last free CPU %s", as["web"].CPUs, web)
	}
	if got := tree.file("pods/web", "cpuset.cpus"); got != web.String() {
		t.Errorf("web cpuset.cpus = %q, want %s", got, web)
	}
	// Every unreserved CPU is exclusive now: BE runs on the reserved CPU.
	if got := tree.file("pods/batch", "cpuset.cpus"); got != "0" {
		t.Errorf("batch cpuset.cpus = %q, want the reserved CPU 0", got)
	}
	if got := tree.file("pods/redis", "memory.low"); got != "2147483648" {
		t.Errorf("redis memory.low = %q changed by an unrelated edit", got)
	}
}

func TestRemovalRestoresOriginals(t *testing.T) {
	for _, k := range treeKinds {
		t.Run(k.name, func(t *testing.T) {
			tree := newCgroupTree(t, k.v, k.anolis, "0-3")
			tree.mkcg("pods/redis", "pods/batch")
			before := tree.snapshot()
			h := newHarness(t, tree, redisAndBatch, nil)
			h.reconcile()
			if reflect.DeepEqual(before, tree.snapshot()) {
				t.Fatal("reconcile changed nothing")
			}
			h.writeConfig(head + "workloads: []\n")
			h.reconcile()
			if after := tree.snapshot(); !reflect.DeepEqual(before, after) {
				for f, v := range after {
					if before[f] != v {
						t.Errorf("%s = %q after removal, originally %q", f, v, before[f])
					}
				}
			}
			if c := h.checkpoint(); len(c.Workloads) != 0 || len(c.Assignments) != 0 {
				t.Errorf("checkpoint still holds %v %v", c.Workloads, c.Assignments)
			}
			for _, cg := range []string{"pods/redis", "pods/batch"} {
				if _, err := os.Stat(tree.dir(tree.knobDir("cpuset.cpus"), cg)); err != nil {
					t.Errorf("cgroup %s that Locus did not create was removed: %v", cg, err)
				}
			}
		})
	}
}

func TestBadConfigKeepsTheLastGoodOne(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, nil)
	h.reconcile()
	before := tree.snapshot()
	bad := []struct{ doc, field string }{
		{strings.Replace(redisAndBatch, "reservedCPUs", "reservedCPU", 1), "reservedCPU"},
		{redisAndBatch + "resourceQOSConfig: {clusterStrategy: {lsClass: {memoryQOS: {throttlingPercent: 120}}}}\n", "throttlingPercent"},
		{strings.Replace(redisAndBatch, "qosClass: BE", "qosClass: gold", 1), "qosClass"},
	}
	for _, b := range bad {
		h.writeConfig(b.doc)
		if res := h.reconcile(); res.Writes != 0 {
			t.Errorf("bad config (%s) led to %d writes", b.field, res.Writes)
		}
		evs := h.events()
		last := evs[len(evs)-1]
		if last.Reason != "ConfigInvalid" || !strings.Contains(last.Message, b.field) {
			t.Errorf("last event %+v does not name the field %s", last, b.field)
		}
		if st, _ := status.Read(h.opts.StateDir); !strings.Contains(st.ConfigError, b.field) {
			t.Errorf("status configError %q does not name %s", st.ConfigError, b.field)
		}
	}
	if !reflect.DeepEqual(before, tree.snapshot()) {
		t.Error("a bad config changed cgroup files")
	}
	if len(h.checkpoint().Workloads) != 2 {
		t.Error("a bad config dropped workloads")
	}
	h.writeConfig(strings.Replace(redisAndBatch, "reservedCPUs: \"0\"", "reservedCPUs: \"0-1\"", 1))
	h.reconcile()
	if st, _ := status.Read(h.opts.StateDir); st.ConfigError != "" || st.Node.Reserved != "0-1" {
		t.Errorf("fixed config not taken: %+v", st.Node)
	}
}

func TestBrokenOrMissingCgroupDoesNotBlockOthers(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	// redis's cpuset.mems is gone (controller disabled): its writes fail.
	if err := os.Remove(filepath.Join(tree.dir("", "pods/redis"), "cpuset.mems")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, tree, redisAndBatch+"- {name: gone, cgroup: pods/gone}\n", nil)
	res := h.a.Reconcile()
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Error(), "redis") {
		t.Fatalf("errors = %v, want one naming redis", res.Errors)
	}
	if got := tree.file("pods/batch", "cpuset.cpus"); got == "0-3" {
		t.Errorf("batch not written (cpuset.cpus %q) because redis failed", got)
	}
	found := false
	for _, p := range res.Problems {
		found = found || (p.Workload == "gone" && p.Reason == "CgroupNotFound")
	}
	if !found {
		t.Errorf("no CgroupNotFound problem for the missing cgroup: %v", res.Problems)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V1, true, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	before := tree.snapshot()
	h := newHarness(t, tree, redisAndBatch+"- {name: cmd, command: [sleep, \"600\"]}\n",
		func(o *Options) { o.DryRun = true })
	res := h.reconcile()
	if len(res.Planned) == 0 || !strings.Contains(h.out.String(), "cpuset.cpus = ") {
		t.Fatalf("dry run planned nothing: %q", h.out.String())
	}
	for _, want := range []string{"create cgroup locus.slice/cmd", "start cmd: sleep 600"} {
		if !strings.Contains(h.out.String(), want) {
			t.Errorf("dry-run output lacks %q:\n%s", want, h.out.String())
		}
	}
	if !reflect.DeepEqual(before, tree.snapshot()) {
		t.Error("dry run changed cgroup files")
	}
	if _, err := os.Stat(h.opts.StateDir); !os.IsNotExist(err) {
		t.Errorf("dry run created the state dir: %v", err)
	}
}

func TestLeasedCPUsAreTaken(t *testing.T) {
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, nil)
	lease := state.Lease{Cgroup: "locus.slice/run-1", Assignment: workload.Assignment{CPUs: cpuset.New(3), Policy: "full-pcpus"},
		Owner: self(t)}
	if err := h.a.store.Update(func(c *state.Checkpoint) error { c.Leases["run-1"] = lease; return nil }); err != nil {
		t.Fatal(err)
	}
	h.reconcile()
	c := h.checkpoint()
	if got := c.Assignments["redis"].CPUs; !got.Equals(cpuset.New(1, 2)) {
		t.Errorf("redis got %s, want 1-2 around the leased CPU 3", got)
	}
	if _, ok := c.Assignments["lease:run-1"]; ok || len(c.Leases) != 1 {
		t.Errorf("lease leaked into assignments or was dropped: %+v", c)
	}
	if got := tree.file("pods/batch", "cpuset.cpus"); got != "0" {
		t.Errorf("batch cpuset.cpus = %q: the shared pool must exclude leased CPUs", got)
	}
	if _, err := os.Stat(tree.dir("", "locus.slice/run-1")); !os.IsNotExist(err) {
		t.Error("the agent touched the lease's cgroup")
	}
}
