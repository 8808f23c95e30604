package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/status"
)

// A HostConfig workload's memory and huge pages are placed with its CPUs,
// end to end on a fixture sysfs tree of one 16 GiB node with 64 pages of
// 2 MiB: one that fits is pinned there and holds its memory; one asking
// more memory than the node has, and one asking more huge pages than the
// pool, run in the shared pool, told why, while the agent goes on.
func TestStandaloneMemory(t *testing.T) {
	sys := fixtureTree(t, "small-1s-4c")
	pool := filepath.Join(sys, "devices/system/node/node0/hugepages/hugepages-2048kB")
	if err := os.MkdirAll(pool, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"nr_hugepages": "64", "free_hugepages": "64"} {
		if err := os.WriteFile(filepath.Join(pool, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cg := v2Tree(t, "pods/db")
	for _, rel := range []string{"pods/big", "pods/dpdk"} {
		copyDir(t, filepath.Join(cg, "pods/db"), filepath.Join(cg, rel))
	}
	dir := t.TempDir()
	cfg, state := filepath.Join(dir, "host.yaml"), filepath.Join(dir, "state")
	doc := `apiVersion: locus.io/v1alpha1
kind: HostConfig
workloads:
- name: db
  cgroup: pods/db
  resources: {requests: {memory: 4Gi, hugepages-2Mi: 64Mi}, limits: {cpu: "1", memory: 6Gi}}
  annotations: {cpuset-scheduler: "true"}
- name: big
  cgroup: pods/big
  resources: {limits: {cpu: "1", memory: 20Gi}}
  annotations: {cpuset-scheduler: "true"}
- name: dpdk
  cgroup: pods/dpdk
  resources: {limits: {cpu: "1", hugepages-2Mi: 128Mi}}
  annotations: {cpuset-scheduler: "true"}
`
	byName := agentOnceStatus(t, cfg, doc, state, sys, cg)
	db := byName["db"]
	if db.Pool != "exclusive" || db.Mems != "0" || len(db.MemoryByNode) != 1 ||
		db.MemoryByNode[0] != (status.NodeMemory{Node: 0, Bytes: 4 << 30, HugePages2Mi: 64 << 20}) {
		t.Errorf("db = %+v", db)
	}
	if b, _ := os.ReadFile(filepath.Join(cg, "pods/db/cpuset.mems")); strings.TrimSpace(string(b)) != "0" {
		t.Errorf("db cpuset.mems = %q", b)
	}
	for name, short := range map[string]string{"big": "memory", "dpdk": "hugepages-2Mi"} {
		w := byName[name]
		if w.Pool != "shared" || len(w.MemoryByNode) != 0 || len(w.Problems) != 1 ||
			!strings.HasPrefix(w.Problems[0], "CPUAllocationFailed: ") || !strings.Contains(w.Problems[0], short) {
			t.Errorf("%s = %+v, want it shared, told %s is short", name, w, short)
		}
	}
	evs, _ := runLocus(t, "events", "--state-dir", state, "--workload", "big")
	if !strings.Contains(evs, "CPUAllocationFailed") {
		t.Errorf("no Warning for big:\n%s", evs)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// agentOnceStatus writes doc to cfg, runs one standalone reconcile on the
// fixture sysfs tree sys and the v2 cgroup tree cg, and returns what
// `locus status -o json` then says of each workload, by name.
func agentOnceStatus(t *testing.T, cfg, doc, state, sys, cg string) map[string]status.WorkloadStatus {
	t.Helper()
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runLocus(t, "agent", "--once", "--standalone", "--config", cfg, "--state-dir", state, "--sysfs-root", sys,
		"--cgroup-root", cg, "--cgroup-version", "v2", "--metrics-addr", ""); err != nil {
		t.Fatalf("agent --once: %v\n%s", err, out)
	}
	js, _ := runLocus(t, "status", "--state-dir", state, "-o", "json")
	var st status.Status
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		t.Fatalf("status -o json: %v\n%s", err, js)
	}
	byName := map[string]status.WorkloadStatus{}
	for _, w := range st.Workloads {
		byName[w.Name] = w
	}
	return byName
}
