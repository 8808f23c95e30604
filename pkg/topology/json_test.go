package topology_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

func TestJSONRoundTrip(t *testing.T) {
	noL3 := fixture.Small4
	noL3.Name, noL3.NoL3, noL3.Isolated, noL3.Offline = "no-l3-isolated", true, "1-2", "3"
	for _, s := range append(append(fixture.Shipped(), fixture.WithDevices()...), noL3) {
		t.Run(s.Name, func(t *testing.T) {
			want := fixture.MustBuild(s)
			b, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			got := &topology.Topology{}
			if err := json.Unmarshal(b, got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round trip changed the topology\n got: %s\nwant: %s", js(t, got), b)
			}
		})
	}
}

// The exact form other tools parse.
func TestJSONContract(t *testing.T) {
	s := fixture.MemoryOnly
	s.Sockets, s.CoresPerSocket, s.MemoryPerNode, s.Isolated = 1, 1, 4096, "1"
	b, err := json.Marshal(fixture.MustBuild(s))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cpus":[{"id":0,"core":0,"socket":0,"die":0,"numa":0,"l3":0},` +
		`{"id":1,"core":0,"socket":0,"die":0,"numa":0,"l3":0}],` +
		`"numaNodes":[{"id":0,"cpus":"0-1","memoryTotalBytes":4096,"memoryFreeBytes":3072,"distances":[10,21]},` +
		`{"id":1,"cpus":"","memoryTotalBytes":4096,"memoryFreeBytes":3072,"distances":[21,10]}],` +
		`"isolated":"1"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
}

func TestJSONUnmarshalErrorsNameTheField(t *testing.T) {
	good := `{"cpus":[{"id":0,"core":0,"socket":0,"die":0,"numa":0,"l3":0}],` +
		`"numaNodes":[{"id":0,"cpus":"0","memoryTotalBytes":1,"memoryFreeBytes":1,"distances":[10]}],"isolated":""}`
	cases := []struct {
		name, old, new, want string
	}{
		{"bad isolated", `"isolated":""`, `"isolated":"x"`, "isolated"},
		{"bad node cpus", `"cpus":"0"`, `"cpus":"0-"`, "numaNodes[0].cpus"},
		{"huge node cpus", `"cpus":"0"`, `"cpus":"0-999999999"`, "numaNodes[0].cpus"},
		{"negative core", `"core":0`, `"core":-2`, "cpus[0].core"},
		{"negative socket", `"socket":0`, `"socket":-1`, "cpus[0].socket"},
		{"negative die", `"die":0`, `"die":-1`, "cpus[0].die"},
		{"l3 below -1", `"l3":0`, `"l3":-2`, "cpus[0].l3"},
		{"wrong type", `"id":0,"core"`, `"id":"zero","core"`, "cpus.id"},
		{"distances short", `"distances":[10]`, `"distances":[]`, "numa node 0 has 0 distances"},
		{"cpu on unknown node", `"numa":0`, `"numa":3`, "unknown numa node 3"},
		{"node misses its cpu", `"cpus":"0"`, `"cpus":""`, "does not list its cpu 0"},
		{"no cpus", `"cpus":[{"id":0,"core":0,"socket":0,"die":0,"numa":0,"l3":0}]`, `"cpus":[]`, "no online CPUs"},
		{"not json", good, `{`, "unexpected end of JSON input"},
		{"huge pages more free than total", `"distances":[10]`, `"distances":[10],"hugePages":[{"sizeKiB":2048,"total":1,"free":2}]`,
			"numa node 0: hugePages[0]: total 1, free 2"},
		{"huge page size not a power of two", `"distances":[10]`, `"distances":[10],"hugePages":[{"sizeKiB":3000,"total":1,"free":1}]`,
			"hugePages[0].sizeKiB: 3000"},
		{"huge page sizes unsorted", `"distances":[10]`,
			`"distances":[10],"hugePages":[{"sizeKiB":1048576,"total":1,"free":1},{"sizeKiB":2048,"total":1,"free":1}]`,
			"hugePages[1].sizeKiB: 2048 not sorted"},
	}
	var ok topology.Topology
	if err := json.Unmarshal([]byte(good), &ok); err != nil {
		t.Fatalf("baseline document rejected: %v", err)
	}
	for _, c := range cases {
		refusesEdit(t, good, c.name, c.old, c.new, c.want)
	}
}

func TestJSONIgnoresExtraKeys(t *testing.T) {
	doc := `{"version":2,"cpus":[{"id":0,"core":0,"socket":0,"die":0,"numa":0,"l3":-1,"smt":false}],` +
		`"numaNodes":[{"id":0,"cpus":"0\n","memoryTotalBytes":1,"memoryFreeBytes":1,"distances":[10],"gpus":0}]}`
	var top topology.Topology
	if err := json.Unmarshal([]byte(doc), &top); err != nil {
		t.Fatal(err)
	}
	if c, _ := top.CPU(0); c.L3 != -1 || !top.Isolated.IsEmpty() {
		t.Fatalf("got cpu %+v isolated %q", c, top.Isolated.String())
	}
}

func TestLoadJSONFile(t *testing.T) {
	dir := t.TempDir()
	want := fixture.MustBuild(fixture.MemoryOnly)
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(js(t, want)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"cpus":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := topology.LoadJSONFile(good)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadJSONFile = %v, %v; want the saved topology", got, err)
	}
	for _, path := range []string{bad, filepath.Join(dir, "missing.json")} {
		if _, err := topology.LoadJSONFile(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("LoadJSONFile(%s) error %v, want one naming the file", path, err)
		}
	}
}

func TestParseCPUList(t *testing.T) {
	cases := []struct {
		in, want string
		bad      bool
	}{
		{in: "0-3,8\n", want: "0-3,8"},
		{in: "", want: ""},
		{in: " \n", want: ""},
		{in: "5,1-2", want: "1-2,5"},
		{in: "1,,2", bad: true},
		{in: "3-1", bad: true},
		{in: "-1", bad: true},
		{in: "0-70000", bad: true},
		{in: "a", bad: true},
	}
	for _, c := range cases {
		set, err := topology.ParseCPUList(c.in)
		if c.bad != (err != nil) || (!c.bad && set.String() != c.want) {
			t.Errorf("ParseCPUList(%q) = %q, %v; want %q (error expected: %v)", c.in, set.String(), err, c.want, c.bad)
		}
	}
}

// refusesEdit checks that good with old replaced by new (once) is refused
// by the JSON reader with an error containing want.
func refusesEdit(t *testing.T, good, name, old, new, want string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		doc := strings.Replace(good, old, new, 1)
		if doc == good {
			t.Fatalf("edit %q -> %q changed nothing", old, new)
		}
		var top topology.Topology
		err := json.Unmarshal([]byte(doc), &top)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want one containing %q", err, want)
		}
	})
}
