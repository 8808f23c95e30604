package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/locality"
)

func TestMigrateUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"migrate"}, "give exactly one of --pid, --cgroup or --workload"},
		{[]string{"migrate", "--pid", "1", "--strategy", "memcpy"}, `--strategy "memcpy"`},
		{[]string{"migrate", "--pid", "1", "--budget-ms", "0"}, "--budget-ms 0"},
		{[]string{"migrate", "--pid", "1", "--stall", "process"}, `--stall "process": want page or call`},
		{[]string{"migrate", "--pid", "1", "--to", "0", "--local"}, "--to or --local, not both"},
		{[]string{"migrate", "--pid", "1", "--margin", "lots"}, "--margin"},
		{[]string{"migrate", "--pid", "1", "-o", "xml"}, "unknown output format"},
	}
	for _, tc := range tests {
		_, err := runLocus(t, tc.args...)
		var ue usageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &ue) {
			t.Errorf("%v: error %v, want usage error %q", tc.args, err, tc.want)
		}
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if _, err := runLocus(t, "migrate", "--pid", strconv.Itoa(cmd.Process.Pid), "--to", "x"); err == nil || !strings.Contains(err.Error(), `--to "x"`) {
		t.Errorf("--to x: %v", err)
	}
}

// On a one-node machine a migration has nowhere to go: it is skipped.
func TestMigrateOneNodeReportsSkipped(t *testing.T) {
	nodes, err := locality.MemoryNodes("")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 {
		t.Skipf("memory nodes %v: the multi-node runs are pkg/locality's guest tests", nodes)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := strconv.Itoa(cmd.Process.Pid)
	out, err := runLocus(t, "migrate", "--pid", pid, "--to", "0")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pid " + pid + " (sleep) to local numa 0 with move_pages", "skipped: no target numa",
		"pages moved:        0", "remote pages left:  0", "local ratio:        100% -> 100%"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = runLocus(t, "migrate", "--pid", pid, "--strategy", "migrate_pages", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Strategy string `json:"strategy"`
		Skipped  string `json:"skipped"`
		Moved    uint64 `json:"pagesMoved"`
		Before   int    `json:"localRatioBefore"`
		After    int    `json:"localRatioAfter"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Strategy != "migrate_pages" || res.Skipped != "no target numa" || res.Moved != 0 || res.After != 100 {
		t.Errorf("json %+v", res)
	}
}

// A target node that does not exist or holds no memory is an error, not a
// migration that reports success having moved nothing.
func TestMigrateToAMissingNodeFails(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	_, err := runLocus(t, "migrate", "--pid", strconv.Itoa(cmd.Process.Pid), "--to", "63")
	if err == nil || !strings.Contains(err.Error(), "NUMA node 63 does not exist or has no memory") {
		t.Fatalf("--to 63: error %v, want one naming node 63", err)
	}
	if err := targetsHaveMemory([]int{0, 1}, []int{0, 2}); err == nil || !strings.Contains(err.Error(), "node 1") {
		t.Errorf("a node without memory (1 of memory nodes 0,2): %v", err)
	}
}
