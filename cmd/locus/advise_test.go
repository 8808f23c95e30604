package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// idleProc writes a /proc/stat with n idle CPUs; read twice it shows them
// idle over any window.
func idleProc(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "proc")
	var sb strings.Builder
	sb.WriteString("cpu  0 0 0 100 0 0 0 0 0 0\n")
	for i := range n {
		fmt.Fprintf(&sb, "cpu%d 0 0 0 100 0 0 0 0 0 0\n", i)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestAdviseOnFixture(t *testing.T) {
	sys := fixtureTree(t, fixture.AMDNPS4.Name) // 8 nodes of 32 CPUs, 4 per socket
	proc := idleProc(t, 256)
	base := []string{"advise", "--sysfs-root", sys, "--proc-root", proc, "--window", "0"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--cpus", "4", "--memory", "1Gi"}, "0"},
		{[]string{"--cpus", "40"}, "0-1"},  // two nodes of one socket
		{[]string{"--cpus", "100"}, "0-3"}, // the whole first socket
		{[]string{"--cpus", "1", "--partition", "l3"}, "0"},
	}
	for _, tc := range cases {
		out, err := runLocus(t, append(append(base, tc.args...), "-o", "nodes")...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if strings.TrimSpace(out) != tc.want {
			t.Errorf("%v: nodes %q, want %q", tc.args, strings.TrimSpace(out), tc.want)
		}
	}
	out, err := runLocus(t, append(base, "--cpus", "40", "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Nodes, CPUs string
		Advice      struct {
			Partitions []string
			Fits       bool
			Reason     string
		}
		Measured []struct{ Name string }
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Nodes != "0-1" || !got.Advice.Fits || len(got.Measured) != 8 || got.CPUs == "" ||
		!strings.HasPrefix(got.Advice.Reason, "node0,node1: 64.0 idle CPUs") {
		t.Fatalf("json: %+v", got)
	}
	out, err = runLocus(t, append(base, "--cpus", "2")...)
	if err != nil || !strings.HasPrefix(out, "advice: nodes 0, cpus ") || !strings.Contains(out, "PARTITION") {
		t.Fatalf("table: %v\n%s", err, out)
	}
}

// A request the machine cannot hold is no advice: exit 1, and -o nodes prints
// nothing, so `numactl --cpunodebind=$(locus advise ... -o nodes)` fails
// instead of binding to every node. The table and the JSON still say why.
func TestAdviseDoesNotFitExitsOne(t *testing.T) {
	sys := fixtureTree(t, fixture.AMDNPS4.Name) // 256 CPUs
	base := []string{"advise", "--sysfs-root", sys, "--proc-root", idleProc(t, 256), "--window", "0"}
	for _, tc := range []struct {
		args []string
		out  string // what stdout must hold ("" for nothing)
	}{
		{[]string{"--cpus", "1000", "-o", "nodes"}, ""},
		{[]string{"--cpus", "2", "--memory", "1Pi", "-o", "nodes"}, ""},
		{[]string{"--cpus", "1000", "-o", "json"}, `"fits": false`},
		{[]string{"--cpus", "1000"}, "(does not fit)"},
	} {
		out, err := runLocus(t, append(base, tc.args...)...)
		if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "does not fit") {
			t.Errorf("%v: err %v (exit %d), want exit 1 saying it does not fit", tc.args, err, exitCode(err))
		}
		if (tc.out == "" && out != "") || !strings.Contains(out, tc.out) {
			t.Errorf("%v: printed %q, want %q", tc.args, out, tc.out)
		}
	}
}

// Quantities no machine has, or none at all, are refused by flag and value
// before anything is measured, never turned into a wrong small advice.
func TestAdviseRefusesAbsurdQuantities(t *testing.T) {
	for _, tc := range []struct{ flag, value, want string }{
		{"--cpus", "1e18", "--cpus 1e18: more than 65536 CPUs"},
		{"--cpus", "9223372036854775807", "--cpus 9223372036854775807: more than 65536 CPUs"},
		{"--cpus", "0", "--cpus 0: want more than 0 CPUs"},
		{"--cpus", "0m", "--cpus 0m: want more than 0 CPUs"},
		{"--cpus", "-2", "--cpus -2 is negative"},
		{"--cpus", "NaN", `--cpus "NaN" is not a quantity`},
		{"--cpus", "Inf", `--cpus "Inf" is not a quantity`},
		{"--memory", "1e19", "--memory 1e19: more than 1Pi"},
		{"--memory", "-1Gi", "--memory -1Gi is negative"},
		{"--memory", "NaN", `--memory "NaN" is not a quantity`},
	} {
		args := []string{"advise", "--cpus", "1", "--sysfs-root", "/nonexistent", "-o", "nodes", tc.flag, tc.value}
		out, err := runLocus(t, args...)
		if err == nil || exitCode(err) != 2 || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s %s: err %v (exit %d), want exit 2 with %q", tc.flag, tc.value, err, exitCode(err), tc.want)
		}
		if out != "" {
			t.Errorf("%s %s: printed %q", tc.flag, tc.value, out)
		}
	}
}

func TestAdviseUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"advise"},
		{"advise", "--cpus", "x"},
		{"advise", "--cpus", "-1"},
		{"advise", "--cpus", "1", "--memory", "lots"},
		{"advise", "--cpus", "1", "--partition", "socket"},
		{"advise", "--cpus", "1", "-o", "yaml"},
		{"advise", "--cpus", "1", "--margin", ""},
		{"advise", "--cpus", "1", "extra"},
	} {
		_, err := runLocus(t, args...)
		if err == nil || exitCode(err) != 2 {
			t.Errorf("%v: err %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
}
