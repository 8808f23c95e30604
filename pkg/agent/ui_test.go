package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/view"
)

// serveUI serves the harness's agent on a free port, as Run does, and
// returns its base URL.
func serveUI(t *testing.T, h *harness) string {
	t.Helper()
	s, err := h.a.serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return "http://" + s.Addr()
}

// fetch GETs url and returns the body and its content type; anything but
// 200 fails the test.
func fetch(t *testing.T, url string) (string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%s", url, resp.Status, err, body)
	}
	return string(body), resp.Header.Get("Content-Type")
}

func uiSnapshot(t *testing.T, base string) view.Snapshot {
	t.Helper()
	body, ctype := fetch(t, base+"/ui/snapshot.json")
	var snap view.Snapshot
	if err := json.Unmarshal([]byte(body), &snap); err != nil || ctype != "application/json" {
		t.Fatalf("snapshot (%s): %v\n%s", ctype, err, body)
	}
	return snap
}

func TestUIServesMapSnapshotAndNodeCPUs(t *testing.T) {
	if inGuest() {
		t.Skip("the NUMA test guest has no loopback network; this test runs on the host (make unit)")
	}
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	tree.set("", "pods/redis", "memory.numa_stat", "anon N0=3000 N1=1000\nfile N0=0 N1=0")
	h := newHarness(t, tree, redisAndBatch, func(o *Options) { o.SysfsRoot = sysfs(t, twoNodes) })
	base := serveUI(t, h)

	// Before the first reconcile: the machine, nobody's CPUs, no node figures.
	if snap := uiSnapshot(t, base); snap.Agent || len(snap.Topology.CPUs) != 4 || len(snap.Workloads) != 0 {
		t.Errorf("before a reconcile: agent %v, %d CPUs, workloads %+v", snap.Agent, len(snap.Topology.CPUs), snap.Workloads)
	}
	if _, ok := metricValue(t, h.a.metrics.Reg, "locus_numa_node_cpus"); ok {
		t.Error("locus_numa_node_cpus exported before the agent decided anything")
	}

	h.reconcile()
	redisCPUs := h.checkpoint().Assignments["redis"].CPUs
	snap := uiSnapshot(t, base)
	var redis view.Workload
	for _, w := range snap.Workloads {
		if w.Name == "redis" {
			redis = w
		}
	}
	if !snap.Agent || len(snap.Workloads) != 2 || redis.Pool != "exclusive" || redis.CPUs != redisCPUs.String() ||
		redis.Cgroup != "pods/redis" || redis.MemoryByNode[0] != 3000 || redis.MemoryByNode[1] != 1000 {
		t.Fatalf("snapshot after a reconcile: agent %v, workloads %+v", snap.Agent, snap.Workloads)
	}

	svg, ctype := fetch(t, base+"/ui/map.svg")
	if ctype != "image/svg+xml" || strings.Count(svg, `class="cpu `) != 4 || strings.Count(svg, `class="numa-node"`) != 2 {
		t.Errorf("map.svg (%s) draws %d CPUs and %d nodes, want 4 and 2", ctype, strings.Count(svg, `class="cpu `),
			strings.Count(svg, `class="numa-node"`))
	}
	for _, id := range redisCPUs.List() {
		if !strings.Contains(svg, `id="cpu-`+strconv.Itoa(id)+`" data-cpu="`+strconv.Itoa(id)+`" data-kind="exclusive" data-owner="redis"`) {
			t.Errorf("map.svg does not draw CPU %d as redis's", id)
		}
	}
	for _, path := range []string{"/ui", "/ui/"} {
		page, ctype := fetch(t, base+path)
		if !strings.HasPrefix(ctype, "text/html") || !strings.Contains(page, "<svg") || !strings.Contains(page, `"map.svg"`) {
			t.Errorf("%s (%s) is not the map page", path, ctype)
		}
	}

	// Each node's CPUs by use, every CPU once.
	want := view.NodeCPUs(&snap)
	total := 0
	for node, kinds := range want {
		for kind, n := range kinds {
			got, ok := metricValue(t, h.a.metrics.Reg, "locus_numa_node_cpus", "numa_node", strconv.Itoa(node), "pool", string(kind))
			if !ok || got != float64(n) {
				t.Errorf("locus_numa_node_cpus{numa_node=%d,pool=%s} = %v (present %v), want %d", node, kind, got, ok, n)
			}
			total += n
		}
	}
	if total != 4 || want[snap.Topology.NodesOf(redisCPUs)[0]][view.KindExclusive] != 2 {
		t.Errorf("node counts %v: want 4 CPUs, redis's 2 exclusive on its node", want)
	}
}
