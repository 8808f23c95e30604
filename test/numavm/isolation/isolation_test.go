// Package isolation runs bench/isolation/run.sh inside the NUMA test guest:
// an LS redis-server alone, beside a CPU- and memory-bandwidth BE neighbour
// with everything shared, and under Locus (its own CPU, its memory on that
// CPU's node, the neighbour SCHED_IDLE in the BE pool). The guest needs
// redis and bash copied in and the scripts under /src; bench/isolation/guest.sh
// boots it so. Each line the script prints goes to the console prefixed
// "ISOLATION: ", for the host to summarize.
package isolation

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// script is where --files bench puts run.sh in the guest.
const script = "/src/bench/isolation/run.sh"

// settings are run.sh's variables a kernel parameter numavm.<name>=V (the
// guest's LOCUS_NUMAVM_<NAME>) may set.
var settings = []string{"ROUNDS", "REQUESTS", "WARMUP", "CLIENTS", "SETTLE", "CPUS",
	"BE_CPUS", "BE_MEMBW", "BE_MEMBW_SIZE", "MEMORY_REQUEST"}

// scriptEnv is the environment of run.sh: the guest's, the prebuilt locus
// and the settings passed as LOCUS_NUMAVM_<NAME>.
func scriptEnv(environ []string) []string {
	env := append(append([]string(nil), environ...), "LOCUS=/usr/bin/locus")
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		name, ok := strings.CutPrefix(k, "LOCUS_NUMAVM_")
		if !ok {
			continue
		}
		for _, s := range settings {
			if name == s {
				env = append(env, s+"="+v)
			}
		}
	}
	return env
}

func TestScriptEnv(t *testing.T) {
	env := scriptEnv([]string{"PATH=/bin", "LOCUS_NUMAVM_ROUNDS=3", "LOCUS_NUMAVM_BE_MEMBW_SIZE=32Mi",
		"LOCUS_NUMAVM_NODES=2", "ROUNDSX=1"})
	got := strings.Join(env, " ")
	for _, want := range []string{"PATH=/bin", "LOCUS=/usr/bin/locus", "ROUNDS=3", "BE_MEMBW_SIZE=32Mi"} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("env %q lacks %s", got, want)
		}
	}
	if strings.Contains(got, " NODES=") {
		t.Errorf("env %q passes a guest variable that is not a setting", got)
	}
}

// TestIsolation runs the benchmark and fails when the script fails (a
// cgroup value not what its case says, a neighbour that died) or leaves rows
// out.
func TestIsolation(t *testing.T) {
	if os.Getenv("LOCUS_NUMAVM") != "1" {
		t.Skip("needs the NUMA test guest: bash bench/isolation/guest.sh")
	}
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("%v: boot the guest with --files bench (bench/isolation/guest.sh does)", err)
	}
	// redis listens on 127.0.0.1; the guest brings up no interface itself.
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	cmd := exec.Command("bash", script)
	cmd.Env = scriptEnv(os.Environ())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rows := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		fmt.Println("ISOLATION: " + line)
		for _, c := range []string{"alone,", "shared,", "locus,"} {
			if strings.HasPrefix(line, c) {
				rows++
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	if rows == 0 || rows%6 != 0 {
		t.Errorf("%d result rows: want 6 a round (3 cases, SET and GET)", rows)
	}
}
