package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/hostconfig"
)

// Every config the campaign writes must be one the agent accepts, differ
// from the one before, keep a workload, and over a campaign exercise every
// kind of change.
func TestMutate(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := baseConfig()
	seen := map[string]bool{}
	for i := 0; i < 500; i++ {
		next := mutate(c, rng)
		raw := next.render("locus-crash-1")
		if raw == c.render("locus-crash-1") {
			t.Fatalf("round %d: config unchanged: %s", i, next.describe())
		}
		if len(next) == 0 {
			t.Fatalf("round %d: no workload left", i)
		}
		hc, err := hostconfig.Parse([]byte(raw))
		if err != nil {
			t.Fatalf("round %d: the agent would refuse\n%s\n%v", i, raw, err)
		}
		if len(hc.Workloads) != len(next) {
			t.Fatalf("round %d: %d workloads parsed, %d written", i, len(hc.Workloads), len(next))
		}
		for n, w := range next {
			old, had := c[n]
			switch {
			case !had:
				seen["add"] = true
			case old.Pinned != w.Pinned || old.CPUs != w.CPUs:
				seen["cpus"] = true
			case old.LowPercent != w.LowPercent:
				seen["memory qos"] = true
			case old.LimitMiB != w.LimitMiB:
				seen["limit"] = true
			}
		}
		for n := range c {
			if _, ok := next[n]; !ok {
				seen["remove"] = true
			}
		}
		c = next
	}
	for _, k := range []string{"add", "remove", "cpus", "memory qos", "limit"} {
		if !seen[k] {
			t.Errorf("500 rounds never made a change of kind %q", k)
		}
	}
	if raw := (config{}).render("r"); !strings.Contains(raw, "workloads: []") {
		t.Errorf("the config without workloads:\n%s", raw)
	} else if _, err := hostconfig.Parse([]byte(raw)); err != nil {
		t.Errorf("the config without workloads is refused: %v", err)
	}
}

func TestExpectedMemory(t *testing.T) {
	v := &verifier{
		base:          snapshot{files: map[string]string{"memory/r/ext/e/memory.limit_in_bytes": "268435456", "memory/r/ext/e/memory.soft_limit_in_bytes": "134217728"}},
		kernelDefault: map[string]string{"memory.limit_in_bytes": "max-l", "memory.soft_limit_in_bytes": "max-s"},
	}
	for _, c := range []struct {
		w           workload
		limit, soft string
	}{
		{workload{Name: "e", External: true}, "268435456", "134217728"},
		{workload{Name: "e", External: true, LimitMiB: 64, LowPercent: 50}, "67108864", "16777216"},
		{workload{Name: "c"}, "max-l", "max-s"},
		{workload{Name: "c", LowPercent: 100}, "max-l", "33554432"},
	} {
		if l, s := v.expectedMemory("r", c.w); l != c.limit || s != c.soft {
			t.Errorf("%+v: %s %s, want %s %s", c.w, l, s, c.limit, c.soft)
		}
	}
}

// realV1 skips unless this is root with the cgroup v1 hierarchies the
// campaign needs.
func realV1(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, f := range []string{"cpuset/cpuset.cpus", "memory/memory.soft_limit_in_bytes", "cpu/cpu.shares", "cpuacct/cpuacct.usage"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", f)); err != nil {
			t.Skip("needs cgroup v1 cpuset, memory, cpu and cpuacct at /sys/fs/cgroup")
		}
	}
}

// The checks must see what the agent could get wrong: a file not restored,
// a cgroup left over, the campaign's process gone.
func TestVerifierSeesDamage(t *testing.T) {
	realV1(t)
	root := fmt.Sprintf("locus-crash-test-%d", os.Getpid())
	tr, err := makeTree("/sys/fs/cgroup", root, []workload{{Name: "e", External: true}})
	if tr != nil {
		defer func() {
			if err := tr.remove(""); err != nil {
				t.Error(err)
			}
		}()
	}
	if err != nil {
		t.Fatal(err)
	}
	base, err := tr.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	v := &verifier{t: tr, stateDir: t.TempDir(), base: base}
	if bad := v.restored(); len(bad) > 0 {
		t.Fatalf("untouched tree reported: %v", bad)
	}
	for _, s := range [][3]string{{"cpuset", "cpuset.cpus", "0"}, {"memory", "memory.soft_limit_in_bytes", "1048576"}} {
		orig, _ := tr.read(s[0], root+"/ext/e", s[1])
		if err := tr.write(s[0], root+"/ext/e", s[1], s[2]); err != nil {
			t.Fatal(err)
		}
		if bad := strings.Join(v.restored(), "\n"); !strings.Contains(bad, s[1]) {
			t.Errorf("%s changed from %s to %s, reported: %q", s[1], orig, s[2], bad)
		}
		if err := tr.write(s[0], root+"/ext/e", s[1], orig); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(tr.dir("memory", root+"/locus"), 0o755); err != nil {
		t.Fatal(err)
	}
	if bad := strings.Join(v.restored(), "\n"); !strings.Contains(bad, "memory/"+root+"/locus is left over") {
		t.Errorf("left-over cgroup reported as %q", bad)
	}
	if err := os.Remove(tr.dir("memory", root+"/locus")); err != nil {
		t.Fatal(err)
	}
	if err := tr.write("cpuset", root, "cgroup.procs", fmt.Sprint(tr.sleepers["e"].Process.Pid)); err != nil {
		t.Fatal(err)
	}
	if bad := strings.Join(v.restored(), "\n"); !strings.Contains(bad, "want the campaign's sleep") {
		t.Errorf("moved process reported as %q", bad)
	}
}

// TestCampaignShort is the campaign's fast variant (CRASH_ROUNDS rounds, 10
// by default): about 2 s a round on two CPUs.
func TestCampaignShort(t *testing.T) {
	realV1(t)
	if testing.Short() {
		t.Skip("runs the agent for about 20 s")
	}
	rounds := 10
	if s := os.Getenv("CRASH_ROUNDS"); s != "" {
		fmt.Sscan(s, &rounds)
	}
	bin := filepath.Join(t.TempDir(), "locus")
	// Built in the main module: this one lacks the sums of some of its imports.
	build := exec.Command("go", "build", "-o", bin, "./cmd/locus")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rounds)*20*time.Second)
	defer cancel()
	var out bytes.Buffer
	work := t.TempDir()
	rep, err := run(ctx, options{locus: bin, work: work, rounds: rounds, maxKill: 2 * time.Second,
		settle: 200 * time.Millisecond, timeout: 30 * time.Second, keep: true}, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if rep.failed() {
		if dst := os.Getenv("CRASH_EVIDENCE"); dst != "" {
			_ = exec.Command("cp", "-a", filepath.Join(work, "failures"), dst).Run()
		}
		t.Fatalf("%d/%d converged, %d/%d restored: %s", rep.converged, rep.rounds, rep.restored, rep.rounds, strings.Join(rep.failures, "\n"))
	}
}
