package topology_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// A small machine with every feature discovery handles: two sockets, two
// nodes each, SMT, an offline CPU, isolated CPUs and a memory-only node. Node
// 0 holds cpus 0,1,8,9, node 1 cpus 2,3,10,11, and so on; each node is one L3.
// 16 threads keep tree writing fast.
var rich = fixture.Shape{Name: "rich", Sockets: 2, NUMAPerSocket: 2, L3PerNUMA: 1, CoresPerSocket: 4,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 8 << 30, MemoryOnlyNodes: 1,
	Offline: "7", Isolated: "0,8",
	HugePages: []fixture.NodeHugePages{{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 8, Free: 6}}}}

// tree writes shape s into a fresh directory and returns the root and the
// path of devices/system inside it.
func tree(t *testing.T, s fixture.Shape) (root, sys string) {
	t.Helper()
	root = t.TempDir()
	if err := fixture.WriteSysfs(s, root); err != nil {
		t.Fatal(err)
	}
	return root, filepath.Join(root, "devices", "system")
}

// gone, as the new content of a file, deletes it.
const gone = "\x00remove"

// edit rewrites files under sys for the rest of the (sub)test and restores
// them afterwards, so many cases can share one tree: writing a tree per case
// is what would make these tests slow. Keys may be glob patterns.
func edit(t *testing.T, sys string, edits map[string]string) {
	t.Helper()
	for pattern, content := range edits {
		paths := []string{filepath.Join(sys, pattern)}
		if strings.ContainsAny(pattern, "*?[") {
			var err error
			if paths, err = filepath.Glob(paths[0]); err != nil || len(paths) == 0 {
				t.Fatalf("pattern %s matched nothing (%v)", pattern, err)
			}
		}
		for _, path := range paths {
			old, err := os.ReadFile(path)
			existed := err == nil
			t.Cleanup(func() {
				if existed {
					_ = os.WriteFile(path, old, 0o644)
				} else {
					_ = os.Remove(path)
				}
			})
			if content == gone {
				err = os.Remove(path)
			} else {
				err = os.WriteFile(path, []byte(content), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// siblingsOnlyInCoreCPUsList moves every thread_siblings_list of rich to
// core_cpus_list and poisons core_id, which must then go unused.
func siblingsOnlyInCoreCPUsList() map[string]string {
	top := fixture.MustBuild(rich)
	edits := map[string]string{"cpu/cpu*/topology/thread_siblings_list": gone, "cpu/cpu*/topology/core_id": "99\n"}
	for _, c := range top.CPUs {
		siblings := top.CPUsWhere(func(o topology.CPU) bool { return o.Core == c.Core })
		edits["cpu/cpu"+strconv.Itoa(c.ID)+"/topology/core_cpus_list"] = siblings.String() + "\n"
	}
	return edits
}

// Older kernels and other architectures leave out attributes; discovery falls
// back to what is there and still finds the same machine.
func TestDiscoverFallbacks(t *testing.T) {
	richWith := func(edit func(*fixture.Shape)) *topology.Topology {
		s := rich
		edit(&s)
		return fixture.MustBuild(s)
	}
	cases := []struct {
		name  string
		edits map[string]string
		want  *topology.Topology
	}{
		{"cache ids absent: shared_cpu_list groups the L3",
			map[string]string{"cpu/cpu*/cache/index*/id": gone}, fixture.MustBuild(rich)},
		{"sibling lists absent: core_id groups threads",
			map[string]string{"cpu/cpu*/topology/thread_siblings_list": gone}, fixture.MustBuild(rich)},
		{"siblings only in core_cpus_list", siblingsOnlyInCoreCPUsList(), fixture.MustBuild(rich)},
		{"die_id absent", map[string]string{"cpu/cpu*/topology/die_id": gone}, fixture.MustBuild(rich)},
		{"die_id and package -1 (arm64 without package info): one package",
			map[string]string{"cpu/cpu*/topology/die_id": "-1\n", "cpu/cpu*/topology/physical_package_id": "-1\n"},
			func() *topology.Topology {
				want := fixture.MustBuild(rich)
				for i := range want.CPUs {
					want.CPUs[i].Socket, want.CPUs[i].Die = 0, 0
				}
				return want
			}()},
		{"isolated absent", map[string]string{"cpu/isolated": gone}, richWith(func(s *fixture.Shape) { s.Isolated = "" })},
		{"no level 3 cache", map[string]string{"cpu/cpu*/cache/index3/level": "2\n"},
			richWith(func(s *fixture.Shape) { s.NoL3 = true })},
		{"has_memory absent: every online node kept", map[string]string{"node/has_memory": gone}, fixture.MustBuild(rich)},
		{"node without cpus or memory dropped with its distance column", map[string]string{"node/has_memory": "0-3\n"},
			richWith(func(s *fixture.Shape) { s.MemoryOnlyNodes = 0 })},
	}
	root, sys := tree(t, rich)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			edit(t, sys, c.edits)
			got, err := topology.Discover(root)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %s\nwant %s", js(t, got), js(t, c.want))
			}
		})
	}
}

// Directories, not just files, may be missing; a 4-CPU tree keeps these cheap.
func TestDiscoverMissingDirectories(t *testing.T) {
	noNodes := fixture.MustBuild(fixture.Small4)
	noNodes.Nodes[0].MemoryTotal, noNodes.Nodes[0].MemoryFree = 0, 0 // unknown without a node directory
	noL3 := fixture.Small4
	noL3.NoL3 = true
	cases := []struct {
		name   string
		remove string
		want   *topology.Topology
	}{
		{"no node directory: one node, memory unknown", "node", noNodes},
		{"no cache directories: no L3", "cpu/cpu*/cache", fixture.MustBuild(noL3)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, sys := tree(t, fixture.Small4)
			matches, _ := filepath.Glob(filepath.Join(sys, c.remove))
			if len(matches) == 0 {
				t.Fatalf("%s matched nothing", c.remove)
			}
			for _, m := range matches {
				if err := os.RemoveAll(m); err != nil {
					t.Fatal(err)
				}
			}
			got, err := topology.Discover(root)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %s\nwant %s", js(t, got), js(t, c.want))
			}
		})
	}
}

// Every broken tree gives an error naming the file to look at.
func TestDiscoverErrorsNameTheFile(t *testing.T) {
	cases := []struct {
		name  string
		edits map[string]string // path under devices/system -> new content
		want  string
	}{
		{"online missing", map[string]string{"cpu/online": gone}, "cpu/online"},
		{"online garbage", map[string]string{"cpu/online": "0-x\n"}, "cpu/online"},
		{"online empty", map[string]string{"cpu/online": "\n"}, "cpu/online: no online cpus"},
		{"online names a cpu without topology", map[string]string{"cpu/online": "0-6,8-16\n"},
			"cpu16/topology/physical_package_id"},
		{"package id garbage", map[string]string{"cpu/cpu3/topology/physical_package_id": "zero\n"},
			"cpu3/topology/physical_package_id"},
		{"die id garbage", map[string]string{"cpu/cpu3/topology/die_id": "\n"}, "cpu3/topology/die_id"},
		// cpu2 is the lowest cpu of its core and of its L3, so its files are the ones read.
		{"sibling list garbage", map[string]string{"cpu/cpu2/topology/thread_siblings_list": "2,,10\n"},
			"cpu2/topology/thread_siblings_list"},
		{"no sibling list and no core_id", map[string]string{"cpu/cpu2/topology/thread_siblings_list": gone,
			"cpu/cpu2/topology/core_id": gone}, "cpu2/topology/core_id"},
		{"cache level garbage", map[string]string{"cpu/cpu2/cache/index3/level": "L3\n"}, "cpu2/cache/index3/level"},
		{"cache id and shared list missing", map[string]string{"cpu/cpu2/cache/index3/id": gone,
			"cpu/cpu2/cache/index3/shared_cpu_list": gone}, "cpu2/cache/index3: neither id nor shared_cpu_list"},
		{"isolated garbage", map[string]string{"cpu/isolated": "a-b\n"}, "cpu/isolated"},
		{"node online missing", map[string]string{"node/online": gone}, "node/online"},
		{"node cpulist missing", map[string]string{"node/node1/cpulist": gone}, "node1/cpulist"},
		{"meminfo missing", map[string]string{"node/node4/meminfo": gone}, "node4/meminfo"},
		{"meminfo without MemFree", map[string]string{"node/node0/meminfo": "Node 0 MemTotal: 1024 kB\n"},
			"node0/meminfo: want both"},
		{"meminfo number garbage", map[string]string{"node/node0/meminfo": "Node 0 MemTotal: lots kB\nNode 0 MemFree: 1 kB\n"},
			"node0/meminfo: malformed"},
		{"meminfo without unit", map[string]string{"node/node0/meminfo": "Node 0 MemTotal: 10\nNode 0 MemFree: 1 kB\n"},
			"node0/meminfo: malformed"},
		{"huge pages count garbage", map[string]string{"node/node1/hugepages/hugepages-2048kB/nr_hugepages": "many\n"},
			"hugepages-2048kB/nr_hugepages: \"many\" is not a page count"},
		{"huge pages count absurd", map[string]string{"node/node1/hugepages/hugepages-2048kB/nr_hugepages": "18446744073709551615\n"},
			"hugepages-2048kB/nr_hugepages"},
		{"huge pages more free than reserved", map[string]string{"node/node1/hugepages/hugepages-2048kB/free_hugepages": "9\n"},
			"hugepages-2048kB: 9 free huge pages of 8"},
		{"huge pages free missing", map[string]string{"node/node1/hugepages/hugepages-2048kB/free_hugepages": gone},
			"hugepages-2048kB/free_hugepages"},
		{"distance row short", map[string]string{"node/node3/distance": "21 21 12\n"}, "node3/distance: 3 distances for 5"},
		{"distance garbage", map[string]string{"node/node3/distance": "21 21 12 x 21\n"}, "node3/distance"},
		{"cpu on no node", map[string]string{"node/node0/cpulist": "0,8-9\n"}, "online cpu 1 is listed by no node"},
		{"cpu on two nodes", map[string]string{"node/node1/cpulist": "0,2-3,10-11\n"}, "cpu 0 is listed by node 0 and node 1"},
	}
	root, sys := tree(t, rich)
	if _, err := topology.Discover(root); err != nil {
		t.Fatalf("unedited tree: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			edit(t, sys, c.edits)
			_, err := topology.Discover(root)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

// The host this runs on must be discoverable as it is.
func TestDiscoverHost(t *testing.T) {
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Skipf("no sysfs on this host: %v", err)
	}
	got, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
	want, err := cpuset.Parse(strings.TrimSpace(string(online)))
	if err != nil {
		t.Fatal(err)
	}
	if !got.CPUSet().Equals(want) {
		t.Errorf("discovered cpus %s, host lists %s online", got.CPUSet(), want)
	}
	t.Logf("host: %s", js(t, got))
}

func BenchmarkDiscover256(b *testing.B) {
	root := b.TempDir()
	if err := fixture.WriteSysfs(fixture.AMDNPS4, root); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := topology.Discover(root); err != nil {
			b.Fatal(err)
		}
	}
}

func js(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
