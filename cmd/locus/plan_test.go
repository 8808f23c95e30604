package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// planTree writes shape's sysfs tree and returns its root.
func planTree(t *testing.T, shape fixture.Shape) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fixture.WriteSysfs(shape, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runPlan runs `locus plan args...` in-process.
func runPlan(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"plan"}, args...))
	err := root.Execute()
	return out.String(), err
}

func TestPlanJSON(t *testing.T) {
	nps4 := planTree(t, fixture.AMDNPS4)
	small := planTree(t, fixture.Small4)
	for _, tc := range []struct {
		name string
		args []string
		want planJSON
	}{
		{"defaults", []string{"--sysfs-root", nps4, "--cpus", "4"},
			wantPlan("0-1,128-129", []int{0}, 4, "full-pcpus", "most-allocated", 0)},
		{"allocated and least-allocated", []string{"--sysfs-root", nps4, "--cpus", "20",
			"--allocated", "0-3,128-131", "--numa-strategy", "least-allocated"},
			wantPlan("16-25,144-153", []int{1}, 20, "full-pcpus", "least-allocated", 0)},
		{"spans nodes", []string{"--sysfs-root", nps4, "--cpus", "40", "--policy", "distribute-across-numa"},
			wantPlan("0-9,16-25,128-137,144-153", []int{0, 1}, 40, "distribute-across-numa", "most-allocated", 0)},
		{"reserved skipped", []string{"--sysfs-root", small, "--cpus", "2", "--reserved", "0"},
			wantPlan("1-2", []int{0}, 2, "full-pcpus", "most-allocated", 0)},
		{"reserved allowed", []string{"--sysfs-root", small, "--cpus", "2", "--reserved", "0", "--use-reserved"},
			wantPlan("0-1", []int{0}, 2, "full-pcpus", "most-allocated", 0)},
		{"static-burst with load", []string{"--sysfs-root", nps4, "--cpus", "4", "--policy", "static-burst",
			"--request-milli", "1000", "--burst-load", "5=500"},
			wantPlan("0-1,128-129", []int{0}, 4, "static-burst", "most-allocated", 250)},
		{"static-burst share is the request", []string{"--sysfs-root", small, "--cpus", "2", "--policy", "static-burst",
			"--burst-load", "0=1,1=1"}, wantPlan("2-3", []int{0}, 2, "static-burst", "most-allocated", 1000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runPlan(t, append(tc.args, "-o", "json")...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var got planJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, out)
			}
			if got.CPUSet != tc.want.CPUSet || !slices.Equal(got.NUMANodes, tc.want.NUMANodes) || got.CPUs != tc.want.CPUs ||
				got.Policy != tc.want.Policy || got.NUMAStrategy != tc.want.NUMAStrategy || got.BurstShareMilli != tc.want.BurstShareMilli ||
				!slices.Equal(got.MemNodes, tc.want.MemNodes) || got.MemorySpilled || got.Memory != nil {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// wantPlan is a plan without memory asked for: cpuset.mems names the CPUs' nodes.
func wantPlan(cpus string, nodes []int, count int, policy, strategy string, burst int64) planJSON {
	return planJSON{CPUSet: cpus, NUMANodes: nodes, CPUs: count, Policy: policy, NUMAStrategy: strategy,
		BurstShareMilli: burst, MemNodes: nodes}
}

// --topology reads what `locus topology -o json` writes; both sources agree.
func TestPlanTopologyFile(t *testing.T) {
	shape := fixture.MemoryOnly
	shape.Isolated = "0-1"
	b, err := json.Marshal(fixture.MustBuild(shape))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "topology.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := runPlan(t, "--topology", path, "--cpus", "20", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cpuset":"2-5,16-31","numaNodes":[0,1],"cpus":20,"policy":"full-pcpus","numaStrategy":"most-allocated","memNodes":[0,1]}`
	if compact(t, fromFile) != want {
		t.Fatalf("--topology: got %s, want %s", compact(t, fromFile), want)
	}
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return buf.String()
}

func TestPlanTable(t *testing.T) {
	dir := planTree(t, fixture.Small4)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cpus", "3"}, "cpuset:      0-2 (3 CPUs)\nnuma nodes:  0\nmems:        0\npolicy:      full-pcpus, most-allocated\n"},
		{[]string{"--cpus", "2", "--policy", "static-burst", "--request-milli", "500", "-o", "table"},
			"cpuset:      0-1 (2 CPUs)\nnuma nodes:  0\nmems:        0\npolicy:      static-burst, most-allocated\n" +
				"burst share: 250 millicores on each CPU\n"},
	} {
		out, err := runPlan(t, append([]string{"--sysfs-root", dir}, tc.args...)...)
		if err != nil {
			t.Fatal(err)
		}
		if out != tc.want {
			t.Errorf("args %v: got\n%s\nwant\n%s", tc.args, out, tc.want)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	dir := planTree(t, fixture.Small4)
	for _, tc := range []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"--cpus", "5"}, 2, "full-pcpus: not enough free CPUs: requested=5, available=4"},
		{[]string{"--cpus", "2", "--allocated", "0-2"}, 2, "full-pcpus: not enough free CPUs: requested=2, available=1"},
		{[]string{"--cpus", "0"}, 2, "--cpus must be at least 1, got 0"},
		{[]string{"--cpus", "x"}, 2, `--cpus "x": want a whole number`},
		{[]string{"--cpus", "1", "--policy", "pinned"}, 2, `unknown policy "pinned"`},
		{[]string{"--cpus", "1", "--numa-strategy", "random"}, 2, `unknown numa strategy "random"`},
		{[]string{"--cpus", "1", "--allocated", "0-"}, 2, "--allocated: "},
		{[]string{"--cpus", "1", "--reserved", "7"}, 2, "--reserved: CPUs 7 are not online CPUs of this machine (0-3)"},
		{[]string{"--cpus", "1", "--burst-load", "1:5"}, 2, `--burst-load: "1:5" is not CPU=MILLI`},
		{[]string{"--cpus", "1", "--burst-load", "1=1500"}, 2, "--burst-load: cpu 1: 1500 millicores is outside 0-1000"},
		{[]string{"--cpus", "1", "--topology", "x.json"}, 2, "--sysfs-root and --topology are exclusive"},
		{[]string{"--cpus", "1", "-o", "yaml"}, 2, `unknown output format "yaml"`},
		{[]string{"--cpus", "1", "extra"}, 2, `unexpected argument "extra"`},
	} {
		_, err := runPlan(t, append([]string{"--sysfs-root", dir}, tc.args...)...)
		if err == nil || exitCode(err) != tc.wantCode || !strings.Contains(err.Error(), tc.wantErr) ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("args %v: error %v (exit %d), want exit %d and one line with %q", tc.args, err, exitCodeOf(err), tc.wantCode, tc.wantErr)
		}
	}
	// An unreadable machine description is not the caller's syntax: exit 1.
	_, err := runPlan(t, "--topology", filepath.Join(t.TempDir(), "missing.json"), "--cpus", "1")
	if err == nil || exitCode(err) != 1 {
		t.Errorf("missing --topology file: error %v (exit %d), want exit 1", err, exitCodeOf(err))
	}
}

func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	return exitCode(err)
}
