//go:build linux

package locality

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchCommandTools names a tool "cmd-NAME-budgetN" for each NAME:PATH of
// LOCUS_NUMAVM_BENCH_CMDS (comma-separated: main:/usr/bin/locus-main; after
// the path, more colon-separated arguments of that tool's `locus migrate`:
// call:/usr/bin/locus:--stall=call), at
// the first budget of LOCUS_NUMAVM_BENCH_BUDGETS: `locus migrate` binaries
// built from two commits, run alike in the same boot, compare the
// migrators of both.
func benchCommandTools() []string {
	spec := os.Getenv("LOCUS_NUMAVM_BENCH_CMDS")
	if spec == "" {
		return nil
	}
	budget := strings.TrimSpace(strings.Split(envOr("LOCUS_NUMAVM_BENCH_BUDGETS", "20,0"), ",")[0])
	var tools []string
	for _, nc := range strings.Split(spec, ",") {
		name, _, _ := strings.Cut(nc, ":")
		tools = append(tools, "cmd-"+name+"-budget"+budget)
	}
	return tools
}

// benchCommand resolves a tool benchCommandTools named to its binary, its
// further arguments and budget in ms.
func benchCommand(tool string) (path string, args []string, budgetMS int, ok bool) {
	rest, ok := strings.CutPrefix(tool, "cmd-")
	if !ok {
		return "", nil, 0, false
	}
	i := strings.LastIndex(rest, "-budget")
	if i < 0 {
		return "", nil, 0, false
	}
	budgetMS, err := strconv.Atoi(rest[i+len("-budget"):])
	if err != nil {
		return "", nil, 0, false
	}
	for _, nc := range strings.Split(os.Getenv("LOCUS_NUMAVM_BENCH_CMDS"), ",") {
		if f := strings.Split(nc, ":"); len(f) >= 2 && f[0] == rest[:i] {
			return f[1], f[2:], budgetMS, true
		}
	}
	return "", nil, 0, false
}

// benchLocusCommand moves the child's memory to node 0 with `locus migrate`
// and takes the move's time, calls and stalls from its JSON, the same
// figures the in-process tools take from Result.
func benchLocusCommand(t *testing.T, c *child, run benchRun, path string, args []string, budgetMS int) benchRun {
	t.Helper()
	if budgetMS == 0 {
		budgetMS = int(unbounded / time.Millisecond)
	}
	c.probe(t) // the move's waits start here
	start := time.Now()
	out, err := exec.Command(path, append([]string{"migrate", "--pid", itoa(c.pid()), "--to", "0", "--budget-ms", strconv.Itoa(budgetMS),
		"--margin", fmt.Sprintf("%dMi", guestMargin.MinBytes>>20), "-o", "json"}, args...)...).Output()
	run.total = time.Since(start)
	if err != nil {
		t.Fatalf("%s migrate: %v: %s", path, err, out)
	}
	var res struct {
		PagesMoved     uint64  `json:"pagesMoved"`
		Seconds        float64 `json:"seconds"`
		LongestStallMS float64 `json:"longestStallMs"`
		LongestCallMS  float64 `json:"longestCallMs"` // absent before StallPage: the stall was the call
		P99StallMS     float64 `json:"p99StallMs"`
		Calls          int     `json:"calls"`
		OverBudget     int     `json:"callsOverBudget"`
		Processes      []struct {
			Note string `json:"note"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s migrate: %v: %s", path, err, out)
	}
	run.mb = float64(res.PagesMoved) * 4096 / (1 << 20)
	run.elapsed = time.Duration(res.Seconds * float64(time.Second))
	run.longest = time.Duration(res.LongestStallMS * float64(time.Millisecond))
	run.longestCall = time.Duration(max(res.LongestCallMS, res.LongestStallMS) * float64(time.Millisecond))
	run.p99 = time.Duration(res.P99StallMS * float64(time.Millisecond))
	run.calls, run.overBudget = res.Calls, res.OverBudget
	for _, p := range res.Processes {
		if p.Note != "" {
			run.trace += fmt.Sprintf(" note=%q", p.Note)
		}
	}
	run.wait = c.probe(t) // before the checks, which touch the memory too
	requireOn(t, c, 0)
	requireIntact(t, c)
	run.hugeAfterMB = anonHugeMB(t, c.pid())
	return run
}
