package agent

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// The crash tests run the real locus binary, built once on first use.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

func locusBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if inGuest() { // the NUMA test guest has no Go toolchain, but ships locus built from this tree
			binPath = guestLocus
			return
		}
		if binDir, binErr = os.MkdirTemp("", "locus-agent-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "locus")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/locus-project/locus/cmd/locus").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func cleanupBinary() {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
}

// crashRig runs the agent binary against one config and state dir.
type crashRig struct {
	t        *testing.T
	bin      string
	cfgFile  string
	stateDir string
	args     []string
	tree     *cgroupTree // fixture tree, nil on the real kernel
	rng      *rand.Rand
	stderr   bytes.Buffer
}

func (r *crashRig) cmd(extra ...string) *exec.Cmd {
	args := append([]string{"agent", "--standalone", "--config", r.cfgFile, "--state-dir", r.stateDir,
		"--metrics-addr", "", "--stop-grace", "2s"}, r.args...)
	c := exec.Command(r.bin, append(args, extra...)...)
	c.Stderr = &r.stderr
	return c
}

// killAt starts the agent and kills it with SIGKILL after delay.
func (r *crashRig) killAt(delay time.Duration) {
	r.t.Helper()
	c := r.cmd("--resync", "20ms", "--debug-write-delay", "3ms")
	if err := c.Start(); err != nil {
		r.t.Fatal(err)
	}
	time.Sleep(delay)
	_ = c.Process.Signal(syscall.SIGKILL)
	_ = c.Wait()
}

// killAfterStart kills the agent as soon as a process of workload name
// exists, inside the window (widened by the debug delay) where it is started
// but not yet recorded, and checks that the window was hit.
func (r *crashRig) killAfterStart(name string) {
	r.t.Helper()
	// Wide enough that a loaded machine, which can stall this test's /proc
	// scan for hundreds of milliseconds (200 ms was missed at a load average
	// over 100), still kills inside it.
	window := "600ms"
	if inGuest() { // an emulated CPU scans /proc far slower than the window
		window = "1s"
	}
	c := r.cmd("--resync", "20ms", "--debug-write-delay", window)
	if err := c.Start(); err != nil {
		r.t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && len(ownedProcs(r.stateDir, name)) == 0; {
		time.Sleep(time.Millisecond)
	}
	_ = c.Process.Signal(syscall.SIGKILL)
	_ = c.Wait()
	// The process may be between the shim's exec and the command's: look
	// again for a while rather than take one unlucky scan for its absence.
	got := ownedProcs(r.stateDir, name)
	for deadline := time.Now().Add(2 * time.Second); len(got) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		got = ownedProcs(r.stateDir, name)
	}
	if rec := r.checkpoint().Workloads[name].Started; len(got) == 0 || rec != nil {
		logs, _ := os.ReadFile(filepath.Join(r.stateDir, "logs", name+".log"))
		r.t.Fatalf("the kill missed the start window of %s: running %v, recorded %v\nlog: %s\n%s", name, got, rec, logs, r.stderr.String())
	}
}

// crashes kills the agent n times at seeded random points. On a fixture
// tree, untorn restores a file a kill left empty between the writer's
// O_TRUNC and its write: the kernel's single write(2) to a cgroup file
// cannot tear, so the faithful outcome is "not written yet".
func (r *crashRig) crashes(n int) {
	for i := 0; i < n; i++ {
		var before map[string]string
		if r.tree != nil {
			before = r.tree.snapshot()
		}
		r.killAt(time.Duration(r.rng.IntN(50)) * time.Millisecond)
		if r.tree != nil {
			r.untear(before)
		}
	}
}

func (r *crashRig) untear(before map[string]string) {
	for f, v := range r.tree.snapshot() {
		if v == "" && before[f] != "" {
			r.t.Logf("kill tore %s; putting back %q", f, before[f])
			if err := os.WriteFile(filepath.Join(r.tree.root, f), []byte(before[f]+"\n"), 0o644); err != nil {
				r.t.Fatal(err)
			}
		}
	}
}

// once runs one reconcile to the end.
func (r *crashRig) once() {
	r.t.Helper()
	c := r.cmd("--once")
	c.Stderr = nil
	if out, err := c.CombinedOutput(); err != nil {
		r.t.Fatalf("locus agent --once: %v\n%s\nearlier stderr:\n%s", err, out, r.stderr.String())
	}
}

func (r *crashRig) checkpoint() state.Checkpoint {
	r.t.Helper()
	c, err := (&state.Store{Dir: r.stateDir}).Load()
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// settle runs the agent (starting commands) until one reconcile completed.
func (r *crashRig) settle() {
	r.t.Helper()
	c := r.cmd("--resync", "50ms")
	if err := c.Start(); err != nil {
		r.t.Fatal(err)
	}
	statusFile := filepath.Join(r.stateDir, status.File)
	before, _ := os.Stat(statusFile)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(statusFile); err == nil && (before == nil || fi.ModTime().After(before.ModTime())) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = c.Process.Signal(syscall.SIGKILL)
	_ = c.Wait()
}

func (r *crashRig) noDuplicates(name string, want state.Process) {
	r.t.Helper()
	got := ownedProcs(r.stateDir, name)
	if len(got) != 1 || got[0].Process != want {
		r.t.Fatalf("%s: live processes %v, want exactly the first one %v", name, got, want)
	}
	evs, _ := eventlog.Read(r.stateDir)
	for _, e := range evs {
		if e.Reason == "DuplicateStopped" {
			r.t.Errorf("a duplicate was started: %s", e.Message)
		}
	}
}

func newCrashRig(t *testing.T, cfg string, args ...string) *crashRig {
	dir := t.TempDir()
	r := &crashRig{t: t, bin: locusBinary(t), cfgFile: filepath.Join(dir, "host.yaml"),
		stateDir: filepath.Join(dir, "state"), args: args, rng: rand.New(rand.NewPCG(crashSeed(), 7))}
	r.write(cfg)
	t.Cleanup(func() { killOwned(r.stateDir) })
	return r
}

func (r *crashRig) write(cfg string) {
	if err := writeSettled(r.cfgFile, []byte(cfg)); err != nil {
		r.t.Fatal(err)
	}
}

func TestCrashSafetyFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the agent binary")
	}
	tree := newCgroupTree(t, cgroup.V1, true, "0-3")
	tree.mkcg("pods/redis", "pods/batch", "locus.slice/cmd")
	original := tree.snapshot()
	cfg := redisAndBatch + `- name: cmd
  command: [sleep, "600"]
  resources: {limits: {cpu: "1"}}
  annotations: {cpuset-scheduler: "true"}
`
	r := newCrashRig(t, cfg, "--cgroup-root", tree.root, "--cgroup-version", "v1",
		"--sysfs-root", sysfs(t, fixture.Small4))
	r.tree = tree
	r.killAfterStart("cmd")
	r.crashes(10)
	r.settle()
	ref, refCk := tree.snapshot(), r.checkpoint()
	first := refCk.Workloads["cmd"].Started
	if first == nil || len(refCk.Assignments) != 2 {
		t.Fatalf("first run did not settle: %+v\n%s", refCk, r.stderr.String())
	}

	r.crashes(20)
	r.once()
	if got := tree.snapshot(); !equalMaps(got, ref) {
		t.Errorf("after crashes the tree differs from the first run's:\n%s", diffMaps(ref, got))
	}
	if got := r.checkpoint().Assignments; fmt.Sprint(got) != fmt.Sprint(refCk.Assignments) {
		t.Errorf("assignments moved: %v, first %v", got, refCk.Assignments)
	}
	r.noDuplicates("cmd", *first)

	r.write(head + "workloads: []\n")
	r.crashes(8)
	r.once()
	if got := tree.snapshot(); !equalMaps(got, original) {
		t.Errorf("after removing every workload the tree is not back to its originals:\n%s", diffMaps(original, got))
	}
	if c := r.checkpoint(); len(c.Workloads)+len(c.Assignments) != 0 {
		t.Errorf("checkpoint not empty: %+v", c)
	}
	if procfs.New("").Alive(first.PID, first.StartTime) {
		t.Error("the command still runs after its workload was removed")
	}
}

func TestCrashSafetyRealV1(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the agent binary")
	}
	parent := realV1(t)
	cfg := fmt.Sprintf(`apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: ""
cgroupParent: %s
workloads:
- name: ls
  command: [sleep, "600"]
  resources: {limits: {cpu: "1"}}
  annotations: {cpuset-scheduler: "true"}
- name: be
  command: [sleep, "600"]
  qosClass: BE
`, parent)
	r := newCrashRig(t, cfg, "--cgroup-version", "v1")
	r.killAfterStart("be")
	r.crashes(6)
	r.settle()
	refCk := r.checkpoint()
	ls, be := refCk.Workloads["ls"].Started, refCk.Workloads["be"].Started
	if ls == nil || be == nil || refCk.Assignments["ls"].CPUs.Size() != 1 {
		t.Fatalf("first run did not settle: %+v\n%s", refCk, r.stderr.String())
	}
	want := map[string]string{}
	for _, name := range []string{"ls", "be"} {
		want[name] = readCg(t, "cpuset", parent+"/"+name, "cpuset.cpus")
	}
	r.crashes(12)
	r.once()
	if got := r.checkpoint().Assignments; fmt.Sprint(got) != fmt.Sprint(refCk.Assignments) {
		t.Errorf("assignments moved: %v, first %v", got, refCk.Assignments)
	}
	for name, p := range map[string]*state.Process{"ls": ls, "be": be} {
		r.noDuplicates(name, *p)
		if got := readCg(t, "cpuset", parent+"/"+name, "cpuset.cpus"); got != want[name] {
			t.Errorf("%s cpuset.cpus = %s after crashes, first %s", name, got, want[name])
		}
		if got := cpusAllowed(t, p.PID); got != want[name] {
			t.Errorf("%s Cpus_allowed_list = %s, want %s", name, got, want[name])
		}
	}
	r.write(cfg[:strings.Index(cfg, "workloads:")] + "workloads: []\n")
	r.crashes(6)
	r.once()
	for _, c := range v1Controllers {
		if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, c, parent)); !os.IsNotExist(err) {
			t.Errorf("%s: %s not removed after removing every workload: %v", c, parent, err)
		}
	}
	for _, p := range []*state.Process{ls, be} {
		if procfs.New("").Alive(p.PID, p.StartTime) {
			t.Errorf("process %d still runs after its workload was removed", p.PID)
		}
	}
}

// crashSeed is 42 unless LOCUS_CRASH_SEED asks for another run of kills.
func crashSeed() uint64 {
	if n, err := strconv.ParseUint(os.Getenv("LOCUS_CRASH_SEED"), 10, 64); err == nil {
		return n
	}
	return 42
}

func equalMaps(a, b map[string]string) bool { return diffMaps(a, b) == "" }

func diffMaps(want, got map[string]string) string {
	var sb strings.Builder
	for k, v := range want {
		if got[k] != v {
			fmt.Fprintf(&sb, "  %s = %q, want %q\n", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&sb, "  %s = %q, unexpected\n", k, v)
		}
	}
	return sb.String()
}
