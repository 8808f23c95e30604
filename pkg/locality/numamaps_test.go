package locality

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseNumaMapsCapturedSample(t *testing.T) {
	// Captured on a one-node machine from a process with THP memory, a
	// 4 MiB hugetlb mapping, an mbind(MPOL_BIND) and an MPOL_PREFERRED area.
	maps, err := ParseNumaMaps(readTestdata(t, "numa_maps_hugetlb_thp_bind.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(maps) != 32 {
		t.Fatalf("got %d mappings, want 32", len(maps))
	}
	byStart := map[uint64]Mapping{}
	for _, m := range maps {
		byStart[m.Start] = m
	}
	tests := []struct {
		start      uint64
		policy     string
		huge, heap bool
		file       string
		pageKB     uint64
		basePages  uint64
	}{
		{0x7ff731c00000, "default", true, false, `/anon_hugepage\040(deleted)`, 2048, 1024}, // 2 huge pages
		{0x7ff732000000, "default", false, false, "", 4, 2048},                              // 8 MiB of THP
		{0x7ff7328a0000, "bind:0", false, false, "", 4, 256},
		{0x7ff731b00000, "prefer:0", false, false, "", 4, 128},
		{0x00400000, "default", false, false, "/tmp/go-build3507320825/b001/exe/cap", 4, 173},
		{0x7ff77940e000, "default", false, false, "/etc/passwd", 0, 0},
		{0x3aa5e8000000, "default", false, false, "", 0, 0},
	}
	for _, tc := range tests {
		m, ok := byStart[tc.start]
		if !ok {
			t.Errorf("%#x: mapping missing", tc.start)
			continue
		}
		if m.Policy.String() != tc.policy || m.Huge != tc.huge || m.Heap != tc.heap || m.File != tc.file || m.PageSizeKB != tc.pageKB {
			t.Errorf("%#x: got policy %q huge %v heap %v file %q pagesize %d", tc.start, m.Policy, m.Huge, m.Heap, m.File, m.PageSizeKB)
		}
		if got := m.BasePages(4).Total(); got != tc.basePages {
			t.Errorf("%#x: %d base pages, want %d", tc.start, got, tc.basePages)
		}
	}
	var total NodePages = NodePages{}
	for _, m := range maps {
		total.Add(m.BasePages(4))
	}
	// 173+226+11+17+104+128+1024+2048+256+1+2+1+1+1+1+14+1+13+4
	if got := total[0]; got != 4026 || len(total) != 1 {
		t.Errorf("total %v, want 4026 pages on node 0 only", total)
	}
}

func TestParseNumaMapsTwoNodesPolicies(t *testing.T) {
	maps, err := ParseNumaMaps(readTestdata(t, "numa_maps_two_nodes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		policy MemPolicy
		nodes  NodePages // in base pages
		holds  bool      // with local node 0
	}{
		{MemPolicy{Mode: "default"}, NodePages{0: 200, 1: 110}, false},
		{MemPolicy{Mode: "default"}, NodePages{0: 5, 1: 15}, false},
		{MemPolicy{Mode: "default"}, NodePages{0: 20000, 1: 30000}, false},
		{MemPolicy{Mode: "interleave", Nodes: []int{0, 1}}, NodePages{0: 500, 1: 500}, true},
		{MemPolicy{Mode: "bind", Flags: "static", Nodes: []int{1}}, NodePages{1: 300}, true},
		{MemPolicy{Mode: "prefer (many)", Nodes: []int{1}}, NodePages{1: 64}, true},
		{MemPolicy{Mode: "weighted interleave", Nodes: []int{0, 1}}, NodePages{0: 5, 1: 5}, true},
		{MemPolicy{Mode: "default"}, NodePages{0: 512, 1: 1024}, false},
		{MemPolicy{Mode: "default"}, NodePages{1: 262144}, false},
		{MemPolicy{Mode: "prefer", Flags: "relative", Nodes: []int{0}}, NodePages{0: 8}, false},
		{MemPolicy{Mode: "local"}, NodePages{1: 2048}, false},
		{MemPolicy{Mode: "default"}, NodePages{}, false},
		{MemPolicy{Mode: "default"}, NodePages{0: 33}, false},
	}
	if len(maps) != len(want) {
		t.Fatalf("got %d mappings, want %d", len(maps), len(want))
	}
	for i, w := range want {
		m := maps[i]
		if !reflect.DeepEqual(m.Policy, w.policy) {
			t.Errorf("line %d: policy %#v, want %#v", i+1, m.Policy, w.policy)
		}
		if got := m.BasePages(4); !reflect.DeepEqual(got, w.nodes) {
			t.Errorf("line %d: pages %v, want %v", i+1, got, w.nodes)
		}
		if got := m.Policy.Holds([]int{0}); got != w.holds {
			t.Errorf("line %d: %s holds=%v, want %v", i+1, m.Policy, got, w.holds)
		}
	}
	if !maps[2].Heap || !maps[12].Stack || !maps[7].Huge {
		t.Errorf("heap/stack/huge flags lost: %+v %+v %+v", maps[2], maps[12], maps[7])
	}
	if got := maps[7].Bytes(); got[1] != 2*2<<20 {
		t.Errorf("hugetlb bytes on node 1 = %d, want 4 MiB", got[1])
	}
}

func TestParseNumaMapsErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"zz default N0=1 kernelpagesize_kB=4", `line 1 "zz default`},
		{"1000 default N0=x kernelpagesize_kB=4", `node count "N0=x"`},
		{"1000 default N0=1", "without kernelpagesize_kB"},
		{"1000 default N0=1 kernelpagesize_kB=0", "kernelpagesize_kB"},
		{"1000 bind:1-x anon=1", "invalid node list"},
		{"1000 default N5000=1 kernelpagesize_kB=4", "node count"},
		{"1000", "no memory policy"},
		{"1000 default N0=1 kernelpagesize_kB=20000000000000000", "above the largest page"},
		{"1000 default N0=18014398509481984 kernelpagesize_kB=1", "node count N0=18014398509481984 of 1 kB pages does not fit"},
		{"1000 default N0=18446744073709551615 N0=1 kernelpagesize_kB=4", `node count "N0=1" overflows`},
	}
	for _, tc := range tests {
		_, err := ParseNumaMaps(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to mention %q", tc.text, err, tc.want)
		}
	}
}

func TestParseNumaMapsToleratesUnknownFields(t *testing.T) {
	maps, err := ParseNumaMaps("1000 default anon=3 swapcache=1 writeback=2 newfield=7 flag N2=3 kernelpagesize_kB=4\n\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(maps) != 1 || maps[0].Nodes[2] != 3 || maps[0].Anon != 3 {
		t.Fatalf("got %+v", maps)
	}
}

func TestMemPolicyHolds(t *testing.T) {
	tests := []struct {
		policy string
		local  []int
		want   bool
	}{
		{"default", []int{0}, false},
		{"local", []int{0}, false},
		{"bind:1", []int{0}, true},
		{"bind:0-1", []int{0}, false}, // allows the local node
		{"bind:1", []int{0, 1}, false},
		{"prefer:2", []int{0, 1}, true},
		{"prefer:1", []int{1}, false},
		{"interleave:0-1", []int{0}, true},
		{"interleave:0-1", []int{0, 1}, false},
		{"weighted interleave:2-3", []int{0, 1}, true},
		{"prefer (many):1-2", []int{0}, true},
		{"prefer (many):0,2", []int{0}, false},
		{"futuremode:1", []int{0}, false},
	}
	for _, tc := range tests {
		p, err := ParseMemPolicy(tc.policy)
		if err != nil {
			t.Fatalf("%s: %v", tc.policy, err)
		}
		if got := p.Holds(tc.local); got != tc.want {
			t.Errorf("%s with local %v: holds=%v, want %v", tc.policy, tc.local, got, tc.want)
		}
		if p.String() != tc.policy {
			t.Errorf("%s round-trips as %s", tc.policy, p)
		}
	}
}
