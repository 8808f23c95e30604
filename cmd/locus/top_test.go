package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/locus-project/locus/pkg/view"
)

// tmuxSession runs a command in a detached tmux server of the test's own,
// killed at cleanup; the pane stays after the command exits so a crash
// can be read.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func newTmux(t *testing.T, width, height int, command string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux not found: install the Debian package tmux (apt-get install tmux)")
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("locus-top-test-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	s.run("-f", "/dev/null", "new-session", "-d", "-s", "top", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height),
		command, ";", "set-option", "-t", "top", "remain-on-exit", "on")
	return s
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (s *tmuxSession) screen() string { return s.run("capture-pane", "-p", "-t", "top") }

func (s *tmuxSession) keys(keys ...string) {
	s.run(append([]string{"send-keys", "-t", "top"}, keys...)...)
}

func (s *tmuxSession) resize(width, height int) {
	s.run("resize-window", "-t", "top", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height))
}

// waitFor polls the screen until ok holds; a frame is redrawn within a
// refresh, so 15 s means it never will be.
func (s *tmuxSession) waitFor(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		screen := s.screen()
		if ok(screen) {
			return screen
		}
		if s.dead() || time.Now().After(deadline) {
			s.t.Fatalf("waiting for %s; the screen (locus top exited: %v):\n%s", what, s.dead(), screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dead reports whether the pane's process has exited (see exit).
func (s *tmuxSession) dead() bool {
	_, ok := s.exit()
	return ok
}

// exit is how the pane's process ended ("status N" or "signal N"), once it
// has. tmux fills in the status when it reaps the process, a moment after
// the pane goes dead; under load tmux 3.3a sometimes leaves it a zombie
// for good, so a dead pane without a status is asked of the kernel
// (exit_code, field 52 of /proc/PID/stat, holds a zombie's wait status).
func (s *tmuxSession) exit() (string, bool) {
	f := strings.Split(strings.TrimSpace(s.run("display-message", "-p", "-t", "top",
		"#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}:#{pane_pid}")), ":")
	switch {
	case len(f) != 4 || f[0] != "1":
		return "", false
	case f[1] != "":
		return "status " + f[1], true
	case f[2] != "":
		return "signal " + f[2], true
	}
	stat, err := os.ReadFile("/proc/" + f[3] + "/stat")
	if err != nil {
		return "", false // reaped meanwhile: tmux has the status now
	}
	rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(rest) < 50 || rest[0] != "Z" {
		return "", false
	}
	code, err := strconv.Atoi(rest[49])
	if err != nil {
		return "", false
	}
	if sig := code & 0x7f; sig != 0 {
		return "signal " + strconv.Itoa(sig), true
	}
	return "status " + strconv.Itoa(code>>8), true
}

// `locus top` in a real terminal: the example workloads with the CPUs and
// NUMA nodes the agent gave them, the sort keys, the filter, pause, and
// resizes down to a terminal too small to draw in and back.
func TestTopInTmux(t *testing.T) {
	a := startTopAgent(t)
	snap, err := agentSnapshot(a.addr)
	if err != nil {
		t.Fatal(err)
	}
	s := newTmux(t, 120, 40, a.bin+" top --agent-addr "+a.addr)
	screen := s.waitFor("the workloads", func(sc string) bool {
		order, _ := workloadRows(sc)
		return len(order) == len(exampleWorkloads)
	})
	order, rows := workloadRows(screen)
	if !slices.Equal(order, []string{"batch", "redis", "vm1"}) {
		t.Errorf("rows in order %v, want by name", order)
	}
	for _, w := range snap.Workloads {
		// NAME QOS POOL CPUS NUMA ...
		want := []string{w.Name, w.QOSClass, w.Pool, w.CPUs, intList(w.NUMANodes)}
		if got := rows[w.Name]; len(got) < 5 || !slices.Equal(got[:5], want) {
			t.Errorf("row of %s is %q, want it to start %q\n%s", w.Name, got, want, screen)
		}
	}
	for _, want := range []string{"agent " + a.addr, "2 sockets, 3 NUMA nodes, 16 cores, 32 CPUs", "node 0 · CPUs 0-15",
		"node 2 · memory only", "sort name ↑"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}

	sorted := func(key, header string, want ...string) {
		t.Helper()
		s.keys(key)
		s.waitFor(fmt.Sprintf("%s to sort %v", key, want), func(sc string) bool {
			order, _ := workloadRows(sc)
			return strings.Contains(sc, header) && slices.Equal(order, want)
		})
	}
	sorted("m", "sort mem ↓", "redis", "batch", "vm1") // the others' memory is unknown: last, by name
	sorted("n", "sort name ↑", "batch", "redis", "vm1")
	sorted("n", "sort name ↓", "vm1", "redis", "batch")
	sorted("r", "sort name ↑", "batch", "redis", "vm1")
	sorted("l", "sort local ↑", "redis", "batch", "vm1")

	s.keys("/", "r", "e", "Enter")
	s.waitFor("the filter", func(sc string) bool {
		order, _ := workloadRows(sc)
		return strings.Contains(sc, "filter “re”") && slices.Equal(order, []string{"redis"})
	})
	// Esc then space at once would read as alt+space: wait for the Esc.
	s.keys("Escape")
	s.waitFor("the filter cleared", func(sc string) bool {
		order, _ := workloadRows(sc)
		return !strings.Contains(sc, "filter “") && len(order) == len(exampleWorkloads)
	})
	s.keys("Space")
	s.waitFor("pause", func(sc string) bool { return strings.Contains(sc, "PAUSED") })
	s.keys("Space")

	for _, size := range [][2]int{{80, 24}, {50, 12}, {30, 6}, {200, 60}, {40, 8}, {100, 30}} {
		s.resize(size[0], size[1])
		screen := s.waitFor(fmt.Sprintf("a %dx%d frame", size[0], size[1]), func(sc string) bool {
			if size[0] < view.MinWidth || size[1] < view.MinHeight {
				return strings.Contains(sc, "too small")
			}
			order, _ := workloadRows(sc)
			return strings.Contains(sc, "locus top") && len(order) > 0
		})
		lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
		if len(lines) > size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for _, l := range lines {
			if utf8.RuneCountInString(l) > size[0] {
				t.Errorf("%dx%d: line wider than the terminal: %q", size[0], size[1], l)
			}
		}
	}
	s.keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for !s.dead() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if how, _ := s.exit(); how != "status 0" {
		t.Errorf("after q: locus top ended with %q, want status 0\n%s", how, s.screen())
	}
}

func intList(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, ",")
}

// --once prints one frame: from the agent, and from the host alone (the
// agent's status file) when no agent answers.
func TestTopOnce(t *testing.T) {
	a := startTopAgent(t)
	out, stderr, code := execLocus(t, a.bin, "top", "--once", "--interval", "200ms", "--agent-addr", a.addr, "--width", "100")
	order, rows := workloadRows(out)
	if code != 0 || !slices.Equal(order, []string{"batch", "redis", "vm1"}) || rows["redis"][2] != "exclusive" ||
		strings.Contains(out, "q quit") {
		t.Errorf("top --once: status %d, rows %v\n%s%s", code, rows, out, stderr)
	}
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > 100 {
			t.Errorf("line wider than --width 100: %q", l)
		}
	}
	out, stderr, code = execLocus(t, a.bin, "top", "--once", "--interval", "200ms", "--agent-addr", freeAddr(t),
		"--state-dir", a.stateDir, "--sysfs-root", a.sysfs, "--cgroup-root", a.cgroups, "--cgroup-version", "v2", "--sort", "mem")
	order, _ = workloadRows(out)
	if code != 0 || !strings.Contains(out, "showing the host") || !strings.Contains(out, "status of") || len(order) != 3 || order[0] != "redis" {
		t.Errorf("top --once without an agent: status %d, rows %v\n%s%s", code, order, out, stderr)
	}
}

func TestTopCommandErrors(t *testing.T) {
	cases := []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"top", "--sort", "pid"}, true, `unknown --sort "pid"`},
		{[]string{"top", "--interval", "1ms"}, true, "below 100ms"},
		{[]string{"top", "--cgroup-version", "v9"}, true, "cgroup version"},
		{[]string{"top", "extra"}, true, "unexpected argument"},
		{[]string{"top", "--agent-addr", ""}, true, "needs a terminal"}, // the test's stdout is no terminal
	}
	for _, tc := range cases {
		_, err := runLocus(t, tc.args...)
		var ue usageError
		if err == nil || errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("locus %s: error %v, want %q (usage %v)", strings.Join(tc.args, " "), err, tc.want, tc.usage)
		}
	}
}
