package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// runLocus runs the command line in-process and returns what it printed.
func runLocus(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// fixtureTree writes shape's sysfs tree through the fixture sub-command.
func fixtureTree(t *testing.T, shape string, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sys")
	args := append([]string{"topology", "fixture", "--shape", shape, "--out", dir}, extra...)
	if out, err := runLocus(t, args...); err != nil {
		t.Fatalf("locus %s: %v", strings.Join(args, " "), err)
	} else if !strings.Contains(out, dir) {
		t.Errorf("fixture output %q does not name the directory", out)
	}
	return dir
}

// The JSON printed by `locus topology -o json` is what --topology loads.
func TestTopologyJSONLoadsBack(t *testing.T) {
	dir := fixtureTree(t, fixture.MemoryOnly.Name, "--offline", "3", "--isolated", "0-1")
	got := topologyLoadedBack(t, dir)
	s := fixture.MemoryOnly
	s.Offline, s.Isolated = "3", "0-1"
	if want := fixture.MustBuild(s); !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %+v\nwant %+v", got, want)
	}
}

func TestTopologyTable(t *testing.T) {
	dir := fixtureTree(t, fixture.Small4.Name)
	for _, args := range [][]string{{}, {"-o", "table"}} {
		out, err := runLocus(t, append([]string{"topology", "--sysfs-root", dir}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := topology.RenderTable(&want, fixture.MustBuild(fixture.Small4)); err != nil {
			t.Fatal(err)
		}
		if out != want.String() {
			t.Errorf("args %v: got\n%s\nwant\n%s", args, out, want.String())
		}
	}
}

func TestTopologyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown output", []string{"topology", "-o", "yaml"}, `unknown output format "yaml"`},
		{"unknown flag", []string{"topology", "--bogus"}, "unknown flag: --bogus"},
		{"stray argument", []string{"topology", "extra"}, `unexpected argument "extra"`},
		{"unknown shape", []string{"topology", "fixture", "--shape", "nope", "--out", dir},
			`unknown --shape "nope": want one of intel-2s-48c-ht`},
		{"no out", []string{"topology", "fixture", "--shape", "small-1s-4c"}, "--out is required"},
		{"bad offline", []string{"topology", "fixture", "--shape", "small-1s-4c", "--out", dir, "--offline", "1-x"},
			"--offline: invalid cpu list"},
		{"bad isolated", []string{"topology", "fixture", "--shape", "small-1s-4c", "--out", dir, "--isolated", "9-3"},
			"--isolated: invalid cpu list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runLocus(t, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if code := exitCode(err); code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// A tree that cannot be read is a failure of the run, not of the caller's flags.
func TestTopologyBadTreeExitsOne(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere")
	_, err := runLocus(t, "topology", "--sysfs-root", missing)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(missing, "devices/system/cpu/online")) {
		t.Fatalf("error %v, want one naming the missing online file", err)
	}
	if code := exitCode(err); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
}

// topologyLoadedBack is the topology `locus topology -o json` prints for
// the sysfs tree dir, loaded back as --topology loads it.
func topologyLoadedBack(t *testing.T, dir string) *topology.Topology {
	t.Helper()
	out, err := runLocus(t, "topology", "--sysfs-root", dir, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "topology.json")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := topology.LoadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return got
}
