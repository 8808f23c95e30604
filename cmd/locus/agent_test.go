package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/status"
)

// v2Tree writes a minimal cgroup v2 tree with cgroup rel in it.
func v2Tree(t *testing.T, rel string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{"cgroup.procs": "", "cpuset.cpus": "0-3", "cpuset.mems": "0",
		"memory.min": "0", "memory.low": "0", "memory.high": "max", "memory.max": "max"}
	for _, dir := range []string{root, filepath.Join(root, "pods"), filepath.Join(root, rel)} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestAgentOnceThenStatusAndEvents(t *testing.T) {
	sys := fixtureTree(t, "small-1s-4c")
	cg := v2Tree(t, "pods/web")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "host.yaml")
	state := filepath.Join(dir, "state")
	doc := `apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: "0"
workloads:
- name: web
  cgroup: pods/web
  qosClass: LS
  resources: {requests: {memory: 1Gi}, limits: {cpu: "2", memory: 2Gi}}
  annotations: {cpuset-scheduler: "true", koordinator.sh/memoryQOS: '{"policy": "auto", "lowLimitPercent": 100}'}
`
	if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--standalone", "--config", cfg, "--state-dir", state, "--sysfs-root", sys,
		"--cgroup-root", cg, "--cgroup-version", "v2", "--metrics-addr", ""}

	out, err := runLocus(t, append([]string{"agent", "--dry-run"}, common...)...)
	if err != nil || !strings.Contains(out, "cpuset.cpus = ") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("--dry-run created %s", state)
	}
	if out, err := runLocus(t, append([]string{"agent", "--once"}, common...)...); err != nil {
		t.Fatalf("agent --once: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(cg, "pods/web/memory.low")); strings.TrimSpace(string(b)) != "1073741824" {
		t.Errorf("memory.low = %q, want the 1Gi request", b)
	}

	// --once has exited: status shows its last word and says it is old.
	table, err := runLocus(t, "status", "--state-dir", state)
	if err == nil || !strings.Contains(err.Error(), "the agent is not running: this status is") {
		t.Fatalf("status after the agent exited: error %v, want one saying it is not running", err)
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if !strings.HasPrefix(lines[0], "agent: not running; what follows is its last status, ") {
		t.Errorf("first line = %q", lines[0])
	}
	lines = lines[1:]
	if !strings.HasPrefix(lines[0], "node: 1 socket, 1 NUMA node, 4 cores, 4 CPUs, cgroup v2; CPU lists: exclusive ") {
		t.Errorf("node line = %q", lines[0])
	}
	header, row := strings.Fields(lines[len(lines)-2]), strings.Fields(lines[len(lines)-1])
	if strings.Join(header, " ") != "NAME QOS POOL CPUS NUMA MEMORY MEM QOS CPU QOS PIDS PROBLEMS" {
		t.Errorf("header = %q", header)
	}
	if len(row) < 6 || row[0] != "web" || row[1] != "LS" || row[2] != "exclusive" || row[4] != "0" || row[5] != "0:1.0GiB" ||
		!strings.Contains(lines[len(lines)-1], "low=1.0GiB") {
		t.Errorf("row = %q", lines[len(lines)-1])
	}
	js, err := runLocus(t, "status", "--state-dir", state, "-o", "json")
	var st status.Status
	if err == nil || json.Unmarshal([]byte(js), &st) != nil || len(st.Workloads) != 1 || st.Workloads[0].CPUs == "" {
		t.Fatalf("status -o json: %v\n%s", err, js)
	}

	evs, err := runLocus(t, "events", "--state-dir", state, "--workload", "web")
	if err != nil || !strings.Contains(evs, "CPUsAssigned") || !strings.Contains(evs, "CgroupUpdated") {
		t.Errorf("events: %v\n%s", err, evs)
	}
	evj, err := runLocus(t, "events", "--state-dir", state, "--workload", "nobody", "-o", "json")
	if err != nil || strings.TrimSpace(evj) != "[]" {
		t.Errorf("events for an unknown workload: %v %q", err, evj)
	}
}

func TestAgentCommandErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nothing")
	cases := []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"agent"}, true, "--standalone"},
		{[]string{"agent", "--standalone", "--cgroup-version", "v3"}, true, "cgroup version"},
		{[]string{"status", "--state-dir", missing}, false, "no agent state in " + missing + ": is `locus agent` running?"},
		{[]string{"events", "--state-dir", missing}, false, "no agent state in " + missing},
		{[]string{"status", "-o", "yaml"}, true, "unknown output format"},
		{[]string{"agent", "--standalone", "--state-dir", t.TempDir(), "--config", missing, "--cgroup-version", "v2",
			"--cgroup-root", t.TempDir()}, false, missing},
		{[]string{"agent", "--standalone", "--state-dir", missing, "--reconcile-pace", "-1"}, true, "--reconcile-pace -1: want 0 (unpaced) to 100"},
		{[]string{"agent", "--standalone", "--state-dir", missing, "--reconcile-pace-bound", "1m"}, true, "--reconcile-pace-bound 1m0s: want 0 (unpaced) to 10s"},
	}
	for _, tc := range cases {
		_, err := runLocus(t, tc.args...)
		var ue usageError
		if err == nil || errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("locus %s: error %v (usage %v), want %q (usage %v)", strings.Join(tc.args, " "), err,
				errors.As(err, &ue), tc.want, tc.usage)
		}
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused command made %s (%v)", missing, err)
	}
}

func TestMemSummary(t *testing.T) {
	cases := []struct {
		m    status.MemQoSStatus
		want string
	}{
		{status.MemQoSStatus{}, "off"},
		{status.MemQoSStatus{Enabled: true}, "on (no files)"},
		{status.MemQoSStatus{Enabled: true, Values: map[string]string{"memory.min": "0", "memory.low": "2147483648", "memory.high": "max"}},
			"min=0B low=2.0GiB high=max"},
	}
	for _, tc := range cases {
		if got := memSummary(tc.m); got != tc.want {
			t.Errorf("memSummary(%+v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}
