package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// procFixture writes a proc tree with one process, pid 4242, whose memory is
// the two-node numa_maps sample and which may run on CPU 0 (node 0), plus
// thread 4243 of it.
func procFixture(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	maps, err := os.ReadFile("../../pkg/locality/testdata/numa_maps_two_nodes.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range []string{"4242", "4243"} {
		dir := filepath.Join(root, tid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{
			"numa_maps": string(maps),
			"comm":      "redis-server\n",
			"status":    "Name:\tredis-server\nTgid:\t4242\nPid:\t" + tid + "\nCpus_allowed_list:\t0\n",
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// cgroupFixture writes a v2 cgroup "pod" holding the given pids.
func cgroupFixture(t *testing.T, pids string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "pod"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "pod", "cgroup.procs"), []byte(pids), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestNumastatTargets(t *testing.T) {
	sys := fixtureTree(t, fixture.Intel2S96C.Name)
	proc := procFixture(t)
	cg := cgroupFixture(t, "4242\n4243\n")
	state := t.TempDir()
	status := `{"workloads": [{"name": "web", "cgroup": "pod", "cpus": "0", "numaNodes": [0]}]}`
	if err := os.WriteFile(filepath.Join(state, "status.json"), []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--sysfs-root", sys, "--proc-root", proc, "--cgroup-root", cg, "--cgroup-version", "v2", "--state-dir", state}
	// Sample totals in 4 KiB pages: node 0 21263, node 1 296210.
	tests := []struct {
		args  []string
		label string
	}{
		{[]string{"-p", "4242"}, "pid 4242 (redis-server)"},
		{[]string{"--cgroup", "pod"}, "cgroup pod"},
		{[]string{"--workload", "web"}, "workload web"},
	}
	for _, tc := range tests {
		out, err := runLocus(t, append(append([]string{"numastat"}, tc.args...), common...)...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		for _, want := range []string{"for " + tc.label, "Node 0", "Node 1", "Total", "local ratio 6%", "296210 remote pages", "1 process(es)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, want, out)
			}
		}
		out, err = runLocus(t, append(append([]string{"numastat", "-o", "json"}, tc.args...), common...)...)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Local       []int                         `json:"localNodes"`
			MB          map[string]map[string]float64 `json:"mb"`
			LocalRatio  int                           `json:"localRatio"`
			RemotePages uint64                        `json:"remotePages"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		mb := func(pages float64) float64 { return pages * 4096 / (1 << 20) }
		if rep.LocalRatio != 6 || rep.RemotePages != 296210 || len(rep.Local) != 1 || rep.Local[0] != 0 ||
			rep.MB["Total"]["0"] != mb(21263) || rep.MB["Huge"]["1"] != mb(1024+262144) || rep.MB["Stack"]["0"] != mb(33) {
			t.Errorf("%v: json %+v", tc.args, rep)
		}
	}
}

func TestNumastatErrors(t *testing.T) {
	sys := fixtureTree(t, fixture.Intel2S96C.Name)
	proc := procFixture(t)
	tests := []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"numastat"}, true, "give exactly one of --pid, --cgroup, --workload, --libvirt-domain or --comm"},
		{[]string{"numastat", "-p", "1", "--cgroup", "x"}, true, "exactly one"},
		{[]string{"numastat", "-p", "4242", "-o", "yaml"}, true, "unknown output format"},
		{[]string{"numastat", "-p", "999", "--sysfs-root", sys, "--proc-root", proc}, false, "no such process"},
		{[]string{"numastat", "--workload", "web", "--sysfs-root", sys, "--state-dir", t.TempDir()}, false, "--workload needs a running `locus agent`"},
	}
	for _, tc := range tests {
		_, err := runLocus(t, tc.args...)
		var ue usageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &ue) != tc.usage {
			t.Errorf("%v: error %v (usage %v), want %q (usage %v)", tc.args, err, errors.As(err, &ue), tc.want, tc.usage)
		}
	}
	state := t.TempDir()
	_ = os.WriteFile(filepath.Join(state, "status.json"), []byte(`{"workloads": [{"name": "db"}, {"name": "web"}]}`), 0o644)
	if _, err := runLocus(t, "numastat", "--workload", "cache", "--sysfs-root", sys, "--state-dir", state); err == nil ||
		!strings.Contains(err.Error(), `no workload "cache"`) || !strings.Contains(err.Error(), "db, web") {
		t.Errorf("unknown workload: %v", err)
	}
}
