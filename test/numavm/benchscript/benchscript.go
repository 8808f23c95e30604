// Package benchscript runs a shell benchmark of bench/ inside the NUMA test
// guest (test/numavm), for the guest test packages of those benchmarks
// (test/numavm/isolation, test/numavm/cpuqos). The guest needs the script,
// bench/lib and bash under /src and redis copied in; each benchmark's
// guest.sh boots it so (bench/lib/guest.sh). Every line the script prints
// goes to the console behind the benchmark's prefix, for the host to
// summarize.
package benchscript

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Script is one benchmark script and how its guest run is set.
type Script struct {
	// Path is the script in the guest, where --files puts it
	// (/src/bench/isolation/run.sh).
	Path string
	// Boot is the host command that boots the guest for it, named when the
	// test runs elsewhere.
	Boot string
	// Prefix goes before every line the script prints ("ISOLATION: ").
	Prefix string
	// Settings are the script's variables a kernel parameter numavm.<name>=V
	// (the guest's LOCUS_NUMAVM_<NAME>) may set.
	Settings []string
}

// Env is the environment of the script: environ, the prebuilt locus, the
// settings passed as LOCUS_NUMAVM_<NAME> and then extra (LAYOUT=pinned),
// which wins over them.
func (s Script) Env(environ []string, extra ...string) []string {
	env := append(append([]string(nil), environ...), "LOCUS=/usr/bin/locus")
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		name, ok := strings.CutPrefix(k, "LOCUS_NUMAVM_")
		if !ok {
			continue
		}
		for _, set := range s.Settings {
			if name == set {
				env = append(env, set+"="+v)
			}
		}
	}
	return append(env, extra...)
}

// Setting is the value numavm.<name> gave a setting, or def.
func Setting(name, def string) string {
	if v, ok := os.LookupEnv("LOCUS_NUMAVM_" + name); ok && v != "" {
		return v
	}
	return def
}

// Guest skips t outside the NUMA test guest and fails it when the guest was
// booted without the script.
func (s Script) Guest(t *testing.T) {
	t.Helper()
	if os.Getenv("LOCUS_NUMAVM") != "1" {
		t.Skip("needs the NUMA test guest: bash " + s.Boot)
	}
	if _, err := os.Stat(s.Path); err != nil {
		t.Fatalf("%v: boot the guest with --files bench (bash %s does)", err, s.Boot)
	}
	// redis listens on 127.0.0.1; the guest brings up no interface itself.
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
}

// Run runs the script with Env(os.Environ(), extra...), prints each line of
// its output behind the prefix and returns the lines. It fails t when the
// script fails (a cgroup value not what its case says, a neighbour that
// died).
func (s Script) Run(t *testing.T, extra ...string) []string {
	t.Helper()
	cmd := exec.Command("bash", s.Path)
	cmd.Env = s.Env(os.Environ(), extra...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		fmt.Println(s.Prefix + sc.Text())
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Errorf("reading %s: %v", s.Path, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s %s: %v", strings.Join(extra, " "), s.Path, err)
	}
	return lines
}

// Rows counts the lines that begin with one of prefixes.
func Rows(lines []string, prefixes ...string) int {
	n := 0
	for _, l := range lines {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				n++
				break
			}
		}
	}
	return n
}
