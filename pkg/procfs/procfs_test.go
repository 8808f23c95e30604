package procfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
)

// tail is fields 3..22 of a stat line with state S, ppid 1, pgrp 42 and
// start time 4242.
const tail = " S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 4242 1000 50"

func TestParseStat(t *testing.T) {
	cases := []struct {
		name, text string
		want       Stat
		bad        bool
	}{
		{"plain", "17 (sleep)" + tail, Stat{17, "sleep", 'S', 1, 42, 4194560, 4242}, false},
		{"spaces", "18 (my prog)" + tail, Stat{18, "my prog", 'S', 1, 42, 4194560, 4242}, false},
		{"parens", "19 (a) (b))" + tail, Stat{19, "a) (b)", 'S', 1, 42, 4194560, 4242}, false},
		{"fake fields", "20 (x) Z 9 9 9 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 1)" + tail, Stat{20, "x) Z 9 9 9 0 -1 0 0 0 0 0 0 0 0 0 0 0 0 0 1", 'S', 1, 42, 4194560, 4242}, false},
		{"zombie", "21 (z)" + " Z" + tail[2:], Stat{21, "z", 'Z', 1, 42, 4194560, 4242}, false},
		{"no comm", "22 sleep S 1", Stat{}, true},
		{"short", "23 (x) S 1 2", Stat{}, true},
		{"bad start", "24 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 soon 1000", Stat{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStat(tc.text)
			if tc.bad {
				if err == nil {
					t.Fatalf("want error, got %+v", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// fakeProc writes a proc tree with one process per entry.
func fakeProc(t *testing.T, procs map[int]string) FS {
	t.Helper()
	root := t.TempDir()
	for pid, stat := range procs {
		dir := filepath.Join(root, strconv.Itoa(pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{"stat": stat, "comm": "fake\n", "cmdline": "fake\x00--flag\x00a b\x00", "environ": "A=1\x00B=two\x00"}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	return New(root)
}

func TestFakeRoot(t *testing.T) {
	fs := fakeProc(t, map[int]string{
		7:  "7 (live)" + tail,
		12: "12 (dead)" + " Z" + tail[2:],
	})
	pids, err := fs.PIDs()
	if err != nil || !reflect.DeepEqual(pids, []int{7, 12}) {
		t.Fatalf("PIDs = %v, %v; want [7 12] (self is not a pid)", pids, err)
	}
	if !fs.Alive(7, 4242) {
		t.Error("pid 7 with its start time is not alive")
	}
	if fs.Alive(7, 4243) {
		t.Error("pid 7 alive under another start time: pid reuse not detected")
	}
	if fs.Alive(12, 4242) {
		t.Error("a zombie counts as alive")
	}
	if fs.Alive(99, 4242) {
		t.Error("a missing pid counts as alive")
	}
	if c, _ := fs.Cmdline(7); !reflect.DeepEqual(c, []string{"fake", "--flag", "a b"}) {
		t.Errorf("Cmdline = %q", c)
	}
	if e, _ := fs.Environ(7); !reflect.DeepEqual(e, []string{"A=1", "B=two"}) {
		t.Errorf("Environ = %q", e)
	}
	if c, _ := fs.Comm(7); c != "fake" {
		t.Errorf("Comm = %q", c)
	}
}

func TestRealProcess(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	fs := New("")
	pid := cmd.Process.Pid
	st, err := fs.Stat(pid)
	if err != nil || st.PPID != os.Getpid() {
		t.Fatalf("Stat(%d) = %+v, %v; want ppid %d", pid, st, err, os.Getpid())
	}
	if !fs.Alive(pid, st.StartTime) {
		t.Fatal("running child not alive")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if fs.Alive(pid, st.StartTime) {
		t.Fatal("reaped child still alive")
	}
}
