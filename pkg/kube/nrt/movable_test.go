package nrt

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// movableOf is each zone's AttributeMovableCPUs as published, "" where
// absent.
func movableOf(t *testing.T, obj *Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, z := range obj.Zones {
		for _, a := range z.Attributes {
			if a.Name == AttributeMovableCPUs {
				out[z.Name] = a.Value
			}
		}
	}
	return out
}

// TestBuildMovableCPUs: each zone counts the CPUs there of the pods named
// movable, a pod spanning zones in each; immovable pods, static-burst
// holdings and names holding nothing count none, and a zone with none
// has no attribute.
func TestBuildMovableCPUs(t *testing.T) {
	topo := fixture.MustBuild(fixture.MemoryOnly) // node 0: CPUs 0-15, node 1: 16-31, node 2: memory only
	held := map[string]workload.Assignment{
		"ns/a":     {CPUs: cpuset.New(2, 3, 4, 5), Policy: cpualloc.FullPCPUs},
		"ns/wide":  {CPUs: cpuset.New(14, 15, 16, 17), Policy: cpualloc.DistributeAcrossNUMA},
		"ns/fixed": {CPUs: cpuset.New(18, 19), Policy: cpualloc.FullPCPUs},
		"ns/burst": {CPUs: cpuset.New(20, 21, 22, 23), Policy: cpualloc.StaticBurst, RequestMilli: 1000},
	}
	for _, tc := range []struct {
		name    string
		movable map[string]bool
		want    map[string]string
	}{
		{"none movable", nil, map[string]string{}},
		{"one pod on one zone", map[string]bool{"ns/a": true}, map[string]string{"node-0": "4"}},
		{"a pod over two zones counts in each", map[string]bool{"ns/a": true, "ns/wide": true},
			map[string]string{"node-0": "6", "node-1": "2"}},
		{"false, static-burst and gone pods count none",
			map[string]bool{"ns/fixed": false, "ns/burst": true, "ns/gone": true}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := Build(Input{Node: "n1", Topology: topo, Reserved: cpuset.New(0, 1), Assignments: held, Movable: tc.movable})
			if err != nil {
				t.Fatal(err)
			}
			got := movableOf(t, obj)
			if len(got) != len(tc.want) {
				t.Fatalf("movable CPUs %v, want %v", got, tc.want)
			}
			for zone, w := range tc.want {
				if got[zone] != w {
					t.Errorf("%s: movable CPUs %q, want %q", zone, got[zone], w)
				}
			}
			// What is published reads back as it was counted.
			for _, z := range obj.Zones {
				n, err := ReadMovableCPUs(z, 16)
				if want, _ := strconv.Atoi(tc.want[z.Name]); err != nil || n != want {
					t.Errorf("%s: read back %d, %v; want %d", z.Name, n, err, want)
				}
			}
		})
	}
}

// TestReadMovableCPUs: a count from 0 to the zone's CPUs is read; anything
// else is an error naming the zone and the value.
func TestReadMovableCPUs(t *testing.T) {
	zone := func(values ...string) Zone {
		z := Zone{Name: "node-1", Type: ZoneType, Attributes: []Attribute{{Name: "cpus", Value: "8-15"}}}
		for _, v := range values {
			z.Attributes = append(z.Attributes, Attribute{Name: AttributeMovableCPUs, Value: v})
		}
		return z
	}
	for _, tc := range []struct {
		name    string
		zone    Zone
		want    int
		wantErr string
	}{
		{"absent", zone(), 0, ""},
		{"zero", zone("0"), 0, ""},
		{"some", zone("6"), 6, ""},
		{"all", zone("8"), 8, ""},
		{"more than the zone has", zone("9"), 0, `"9"`},
		{"negative", zone("-1"), 0, `"-1"`},
		{"not a number", zone("four"), 0, `"four"`},
		{"empty", zone(""), 0, `""`},
		{"a huge number", zone("99999999999999999999"), 0, `99999999999999999999`},
		{"a long text", zone(strings.Repeat("7", 1<<20)), 0, "bytes"},
		{"twice", zone("1", "1"), 0, "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadMovableCPUs(tc.zone, 8)
			if tc.wantErr == "" {
				if err != nil || got != tc.want {
					t.Fatalf("= %d, %v; want %d", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("= %d, no error; want one naming %s", got, tc.wantErr)
			}
			if msg := err.Error(); !strings.Contains(msg, `"node-1"`) || !strings.Contains(msg, AttributeMovableCPUs) ||
				!strings.Contains(msg, tc.wantErr) || len(msg) > 400 {
				t.Errorf("error %q: want the zone, the attribute and %s, bounded", msg, tc.wantErr)
			}
		})
	}
}

func FuzzReadMovableCPUs(f *testing.F) {
	for _, s := range []string{"0", "3", "8", "9", "-1", "+3", "03", " 3", "3e1", "0x3", ""} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, value string, cpus int) {
		z := Zone{Name: "node-0", Type: ZoneType, Attributes: []Attribute{{Name: AttributeMovableCPUs, Value: value}}}
		n, err := ReadMovableCPUs(z, cpus)
		if err != nil {
			if n != 0 || !strings.Contains(err.Error(), AttributeMovableCPUs) || len(err.Error()) > 600 {
				t.Fatalf("error %q with %d", err, n)
			}
			return
		}
		if n < 0 || n > cpus {
			t.Fatalf("%q read as %d, outside 0..%d", value, n, cpus)
		}
	})
}
