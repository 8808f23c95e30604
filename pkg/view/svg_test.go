package view

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files in testdata/")

// goldenMaps are the maps kept in testdata/: every shipped machine and
// every one with devices without an agent, three with owners, usage and
// memory, and unequal nodes with huge pages on one node only, without and
// with an agent.
func goldenMaps() map[string]*Snapshot {
	out := map[string]*Snapshot{"small-1s-4c-agent": smallAgent(), "2s-8c-ht-memnode-agent": memnodeAgent(),
		unequalHuge.Name: machineOnly(unequalHuge), unequalHuge.Name + "-agent": hugeAgent()}
	for _, s := range append(fixture.Shipped(), fixture.WithDevices()...) {
		out[s.Name] = machineOnly(s)
	}
	return out
}

func TestSVGGolden(t *testing.T) {
	for name, snap := range goldenMaps() {
		t.Run(name, func(t *testing.T) {
			got := SVG(snap)
			path := filepath.Join("testdata", name+".svg")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./pkg/view -run TestSVGGolden -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("SVG differs from %s; look at the new one and rerun with -update if it is right", path)
			}
		})
	}
}

// element is what the tests read back from a map.
type element struct {
	name  string
	attrs map[string]string
}

func parseSVG(t *testing.T, svg []byte) []element {
	t.Helper()
	var out []element
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			e := element{name: se.Name.Local, attrs: map[string]string{}}
			for _, a := range se.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
		}
	}
}

func hasClass(e element, class string) bool {
	return strings.Contains(" "+e.attrs["class"]+" ", " "+class+" ")
}

// The map holds every node, core and thread of the machine once, each
// thread in its owner's colour with its owner named.
func TestSVGStructure(t *testing.T) {
	maps := goldenMaps()
	// A machine without L3, with an offline thread and an isolated CPU.
	odd := fixture.Shape{Name: "odd", Sockets: 1, NUMAPerSocket: 2, L3PerNUMA: 1, CoresPerSocket: 4, ThreadsPerCore: 2,
		Siblings: fixture.SiblingsAdjacent, MemoryPerNode: 8 << 30, NoL3: true, Offline: "5", Isolated: "3"}
	maps["odd"] = machineOnly(odd)
	maps["odd-agent"] = machineOnly(odd)
	maps["odd-agent"].Agent, maps["odd-agent"].Pools = true, Pools{Reserved: "0", Shared: "1-2,4,6-7"}
	for name, snap := range maps {
		els := parseSVG(t, SVG(snap))
		count := map[string]int{}
		cpus := map[int]element{}
		for _, e := range els {
			for _, c := range []string{"socket", "numa-node", "l3", "core", "cpu"} {
				if hasClass(e, c) {
					count[c]++
				}
			}
			if hasClass(e, "cpu") {
				id, _ := strconv.Atoi(e.attrs["data-cpu"])
				cpus[id] = e
			}
		}
		top := snap.Topology
		cores, sockets := map[int]bool{}, map[int]bool{}
		for _, c := range top.CPUs {
			cores[c.Core], sockets[c.Socket] = true, true
		}
		if count["numa-node"] != len(top.Nodes) || count["core"] != len(cores) || count["cpu"] != len(top.CPUs) ||
			count["socket"] != len(sockets) {
			t.Errorf("%s: drew %v, want %d sockets, %d nodes, %d cores, %d CPUs", name, count, len(sockets),
				len(top.Nodes), len(cores), len(top.CPUs))
		}
		owners, colors := Owners(snap), Colors(snap.Workloads)
		for id, o := range owners {
			e := cpus[id]
			if e.attrs["data-kind"] != string(o.Kind) || e.attrs["data-owner"] != o.Workload ||
				e.attrs["fill"] != ownerColor(o, colors) || e.attrs["id"] != "cpu-"+strconv.Itoa(id) {
				t.Errorf("%s: CPU %d drawn as %v, want owner %+v", name, id, e.attrs, o)
			}
		}
	}
}

// The page is self-contained: no external script, style, font or image.
func TestPageIsSelfContained(t *testing.T) {
	svg := SVG(smallAgent())
	page := string(Page("locus · <host>", svg))
	for _, want := range []string{"<!doctype html>", string(svg), "map.svg", "setTimeout(tick,1000)", "locus · &lt;host&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	rest := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"http://", "https://", " src=", " href=", "@import", "url("} {
		if strings.Contains(rest, bad) {
			t.Errorf("page refers to something outside it: %q", bad)
		}
	}
}
