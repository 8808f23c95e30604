//go:build linux

package locality

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// sysfsNodes writes a fixture sysfs with each node's cpulist.
func sysfsNodes(t *testing.T, cpulists ...string) string {
	t.Helper()
	root := t.TempDir()
	for id, list := range cpulists {
		dir := filepath.Join(root, "devices/system/node", "node"+strconv.Itoa(id))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cpulist"), []byte(list), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestNodesCPUs(t *testing.T) {
	root := sysfsNodes(t, "0-1\n", "2-3,6\n", "x\n")
	for _, tc := range []struct {
		nodes []int
		want  []int
		err   string
	}{
		{nodes: []int{0}, want: []int{0, 1}},
		{nodes: []int{0, 1}, want: []int{0, 1, 2, 3, 6}},
		{nodes: []int{2}, err: "node2/cpulist: invalid cpu list"},
		{nodes: []int{3}, err: "node3/cpulist"},
	} {
		set, err := nodesCPUs(root, tc.nodes)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("nodes %v: error %v, want one containing %q", tc.nodes, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("nodes %v: %v", tc.nodes, err)
		}
		var want unix.CPUSet
		for _, c := range tc.want {
			want.Set(c)
		}
		if set != want {
			t.Errorf("nodes %v: CPUs %v, want %v", tc.nodes, set, tc.want)
		}
	}
}

// onLocalCPUs runs f on the nodes' CPUs and gives the thread its CPUs back;
// where it cannot narrow them (a node unknown, or none of its CPUs allowed)
// f runs where it is.
func TestOnLocalCPUs(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Fatal(err)
	}
	first := -1
	for c := range 1024 {
		if before.IsSet(c) {
			first = c
			break
		}
	}
	narrow := sysfsNodes(t, strconv.Itoa(first)+"\n", "1023\n")
	for _, tc := range []struct {
		name  string
		root  string
		nodes []int
		want  int // CPUs f runs on: 1, or before's count
	}{
		{"the node's one CPU", narrow, []int{0}, 1},
		{"a node unknown", narrow, []int{7}, before.Count()},
		{"no CPU of the node allowed", narrow, []int{1}, before.Count()},
	} {
		ran := 0
		onLocalCPUs(tc.root, tc.nodes, func() {
			ran++
			var in unix.CPUSet
			if err := unix.SchedGetaffinity(0, &in); err != nil {
				t.Fatal(err)
			}
			if in.Count() != tc.want {
				t.Errorf("%s: f ran on %d CPUs, want %d", tc.name, in.Count(), tc.want)
			}
		})
		var after unix.CPUSet
		if err := unix.SchedGetaffinity(0, &after); err != nil {
			t.Fatal(err)
		}
		if ran != 1 || after != before {
			t.Errorf("%s: f ran %d times, CPUs after %d of %d before", tc.name, ran, after.Count(), before.Count())
		}
	}
}
