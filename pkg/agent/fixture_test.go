package agent

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/supervisor"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// TestMain lets the test binary stand in for locus as the command shim.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == supervisor.ShimCommand {
		err := supervisor.ExecInCgroup(os.Args[2:])
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(127)
	}
	code := m.Run()
	cleanupBinary()
	os.Exit(code)
}

// cgroupTree is a fake cgroup root on an ordinary filesystem, laid out like
// the kernel's; anolis adds the Alibaba Cloud Linux / Anolis memory files.
type cgroupTree struct {
	t      testing.TB
	root   string
	v      cgroup.Version
	anolis bool
}

var fixtureV1 = map[string]map[string]string{
	"cpuset": {"cpuset.cpus": "", "cpuset.mems": "", "cgroup.procs": "", "tasks": ""},
	"memory": {"memory.limit_in_bytes": "9223372036854771712", "memory.soft_limit_in_bytes": "9223372036854771712",
		"memory.usage_in_bytes": "4096", "cgroup.procs": "", "tasks": ""},
	"cpu":     {"cpu.cfs_quota_us": "-1", "cpu.cfs_period_us": "100000", "cpu.shares": "1024", "cgroup.procs": "", "tasks": ""},
	"cpuacct": {"cpuacct.usage": "1500", "cgroup.procs": "", "tasks": ""},
}

var fixtureV2 = map[string]string{"cgroup.controllers": "cpuset cpu memory", "cgroup.subtree_control": "cpuset cpu memory",
	"cgroup.procs": "", "cgroup.threads": "", "cpuset.cpus": "", "cpuset.mems": "", "cpu.max": "max 100000",
	"cpu.weight": "100", "memory.min": "0", "memory.low": "0", "memory.high": "max", "memory.max": "max"}

var fixtureAnolis = map[string]string{"memory.min": "0", "memory.low": "0", "memory.high": "max",
	"memory.wmark_ratio": "0", "memory.wmark_high": "max", "memory.wmark_min_adj": "0", "memory.wmark_scale_factor": "50"}

func newCgroupTree(t testing.TB, v cgroup.Version, anolis bool, cpus string) *cgroupTree {
	t.Helper()
	ct := &cgroupTree{t: t, root: t.TempDir(), v: v, anolis: anolis}
	for _, c := range ct.controllers() {
		ct.fill(c, "")
		ct.set(c, "", "cpuset.cpus", cpus)
		ct.set(c, "", "cpuset.mems", "0")
	}
	return ct
}

func (ct *cgroupTree) controllers() []string {
	if ct.v == cgroup.V2 {
		return []string{""}
	}
	return []string{"cpuset", "memory", "cpu", "cpuacct"}
}

func (ct *cgroupTree) dir(c, rel string) string { return filepath.Join(ct.root, c, rel) }

func (ct *cgroupTree) fill(c, rel string) {
	ct.t.Helper()
	files := fixtureV2
	if ct.v == cgroup.V1 {
		files = fixtureV1[c]
	}
	all := map[string]string{}
	for k, v := range files {
		all[k] = v
	}
	if ct.anolis && (c == "memory" || c == "") {
		for k, v := range fixtureAnolis {
			all[k] = v
		}
	}
	if err := os.MkdirAll(ct.dir(c, rel), 0o755); err != nil {
		ct.t.Fatal(err)
	}
	for name, val := range all {
		if err := os.WriteFile(filepath.Join(ct.dir(c, rel), name), []byte(val+"\n"), 0o644); err != nil {
			ct.t.Fatal(err)
		}
	}
}

// mkcg creates cgroups (and ancestors) as the kernel would, v1 cpusets
// copied from the parent.
func (ct *cgroupTree) mkcg(rels ...string) {
	ct.t.Helper()
	for _, rel := range rels {
		parts := strings.Split(rel, "/")
		for i := range parts {
			p := strings.Join(parts[:i+1], "/")
			parent := strings.Join(parts[:i], "/")
			for _, c := range ct.controllers() {
				if _, err := os.Stat(ct.dir(c, p)); err == nil {
					continue
				}
				ct.fill(c, p)
				if c == "cpuset" || c == "" {
					ct.set(c, p, "cpuset.cpus", ct.get(c, parent, "cpuset.cpus"))
					ct.set(c, p, "cpuset.mems", ct.get(c, parent, "cpuset.mems"))
				}
			}
		}
	}
}

// knobDir is the controller directory of a knob's file ("" on v2).
func (ct *cgroupTree) knobDir(file string) string {
	if ct.v == cgroup.V2 {
		return ""
	}
	return strings.SplitN(file, ".", 2)[0]
}

func (ct *cgroupTree) set(c, rel, name, val string) {
	ct.t.Helper()
	if err := os.WriteFile(filepath.Join(ct.dir(c, rel), name), []byte(val+"\n"), 0o644); err != nil {
		ct.t.Fatal(err)
	}
}

func (ct *cgroupTree) get(c, rel, name string) string {
	ct.t.Helper()
	b, err := os.ReadFile(filepath.Join(ct.dir(c, rel), name))
	if err != nil {
		ct.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// file reads a knob's file of cgroup rel, "" if absent.
func (ct *cgroupTree) file(rel, name string) string {
	b, err := os.ReadFile(filepath.Join(ct.dir(ct.knobDir(name), rel), name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// snapshot reads every file of the tree, to compare before and after.
func (ct *cgroupTree) snapshot() map[string]string {
	ct.t.Helper()
	out := map[string]string{}
	_ = filepath.Walk(ct.root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && !strings.HasSuffix(p, "cgroup.procs") && !strings.HasSuffix(p, "tasks") {
			b, _ := os.ReadFile(p)
			out[strings.TrimPrefix(p, ct.root)] = strings.TrimSpace(string(b))
		}
		return nil
	})
	return out
}

// sysfs writes a fixture machine's sysfs tree.
func sysfs(t testing.TB, s fixture.Shape) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sys")
	if err := fixture.WriteSysfs(s, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// harness is an agent on a fixture tree with its config file.
type harness struct {
	t       testing.TB
	a       *Agent
	tree    *cgroupTree
	cfgFile string
	opts    Options
	out     *bytes.Buffer
}

func newHarness(t testing.TB, tree *cgroupTree, cfg string, mod func(*Options)) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, tree: tree, cfgFile: filepath.Join(dir, "host.yaml"), out: &bytes.Buffer{}}
	h.writeConfig(cfg)
	h.opts = Options{ConfigFile: h.cfgFile, StateDir: filepath.Join(dir, "state"),
		SysfsRoot: sysfs(t, fixture.Small4), CgroupRoot: tree.root, CgroupVersion: tree.v,
		Out: h.out, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(&h.opts)
	}
	a, err := New(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	h.a = a
	return h
}

func (h *harness) writeConfig(cfg string) {
	h.t.Helper()
	if err := writeSettled(h.cfgFile, []byte(cfg)); err != nil {
		h.t.Fatal(err)
	}
}

// writeSettled writes a config file dated an hour ago, as if it had long
// been in place: the agent acts on it at once instead of waiting for it to
// settle (pkg/hostsource). Tests of the wait write files as they are.
func writeSettled(file string, data []byte) error {
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return err
	}
	past := time.Now().Add(-time.Hour)
	return os.Chtimes(file, past, past)
}

// reconcile runs one reconcile and fails the test on write errors.
func (h *harness) reconcile() Result {
	h.t.Helper()
	res := h.a.Reconcile()
	if len(res.Errors) > 0 {
		h.t.Fatalf("reconcile errors: %v", res.Errors)
	}
	return res
}

func (h *harness) checkpoint() state.Checkpoint {
	h.t.Helper()
	c, err := (&state.Store{Dir: h.opts.StateDir}).Load()
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

func (h *harness) events() []eventlog.Event {
	h.t.Helper()
	evs, err := eventlog.Read(h.opts.StateDir)
	if err != nil {
		h.t.Fatal(err)
	}
	return evs
}
