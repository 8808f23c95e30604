package topology_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// goldenShapes are the shipped shapes and those with devices, plus the
// cases the table prints differently: isolated CPUs, no L3, a lone socket
// with a memory-only node, and nodes of unequal memory with huge pages on
// one node only.
func goldenShapes() []fixture.Shape {
	noL3 := fixture.Small4
	noL3.Name, noL3.NoL3, noL3.Isolated = "small-no-l3-isolated", true, "2-3"
	return append(append(fixture.Shipped(), fixture.WithDevices()...), noL3, unequalHugePages())
}

// unequalHugePages is a two-socket machine whose node 1 has four times node
// 0's memory and every huge page, of both sizes, some of them in use.
func unequalHugePages() fixture.Shape {
	s := fixture.MemoryOnly
	s.Name, s.MemoryOnlyNodes = "2s-unequal-hugepages", 0
	s.MemoryByNode = map[int]uint64{1: 256 << 30}
	s.HugePages = []fixture.NodeHugePages{
		{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 512, Free: 384}},
		{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages1GiKiB, Total: 16, Free: 16}},
	}
	return s
}

func TestHugePageSizeName(t *testing.T) {
	for in, want := range map[uint64]string{64: "64KiB", 2048: "2MiB", 1 << 20: "1GiB", 16 << 20: "16GiB", 512 << 10: "512MiB"} {
		if got := topology.HugePageSizeName(in); got != want {
			t.Errorf("HugePageSizeName(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderTableGolden(t *testing.T) {
	for _, s := range goldenShapes() {
		t.Run(s.Name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := topology.RenderTable(&buf, fixture.MustBuild(s)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", s.Name+".golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("table output differs from %s (go test -update rewrites it)\n got:\n%s\nwant:\n%s", path, buf.Bytes(), want)
			}
		})
	}
}

func TestHumanBytes(t *testing.T) {
	cases := []struct {
		in   uint64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{3 << 19, "1.5 MiB"},
		{384 << 30, "384.0 GiB"},
		{3762380 * 1024, "3.6 GiB"},
		{2 << 40, "2.0 TiB"},
	}
	for _, c := range cases {
		if got := topology.HumanBytes(c.in); got != c.want {
			t.Errorf("HumanBytes(%d) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The kernel lists every size it supports on every node, most with no page
// reserved: only sizes some node has pages of get a column.
func TestHugePageSizesSkipEmptyPools(t *testing.T) {
	s := unequalHugePages()
	s.HugePages = append(s.HugePages, fixture.NodeHugePages{Node: 0,
		HugePages: topology.HugePages{SizeKiB: 32768}}, fixture.NodeHugePages{Node: 0,
		HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB}})
	got := topology.HugePageSizes(fixture.MustBuild(s))
	if want := []uint64{topology.HugePages2MiKiB, topology.HugePages1GiKiB}; !slices.Equal(got, want) {
		t.Fatalf("sizes %v, want %v", got, want)
	}
	var buf bytes.Buffer
	if err := topology.RenderTable(&buf, fixture.MustBuild(s)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "32MiB") {
		t.Errorf("a column for a size no node has pages of:\n%s", buf.String())
	}
}
