package locality

import (
	"strings"
	"testing"
)

func TestParseMapsCapturedSample(t *testing.T) {
	ranges, err := ParseMaps(readTestdata(t, "maps_hugetlb_thp_bind.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ranges) != 33 {
		t.Fatalf("got %d ranges, want 33", len(ranges))
	}
	tests := []struct {
		i       int
		start   uint64
		len     uint64
		perms   string
		path    string
		special bool
	}{
		{0, 0x400000, 0xad000, "r-xp", "/tmp/go-build3507320825/b001/exe/cap", false},
		{8, 0x7ff731c00000, 4 << 20, "rw-p", "/anon_hugepage (deleted)", false},
		{9, 0x7ff732000000, 8 << 20, "rw-p", "", false},
		{28, 0x7ff779621000, 0x4000, "r--p", "[vvar]", true},
		{31, 0x7ffdb55f5000, 0x21000, "rw-p", "[stack]", false},
		{32, 0xffffffffff600000, 0x1000, "--xp", "[vsyscall]", true},
	}
	for _, tc := range tests {
		r := ranges[tc.i]
		if r.Start != tc.start || r.Len() != tc.len || r.Perms != tc.perms || r.Path != tc.path || r.Special() != tc.special {
			t.Errorf("range %d: got %+v special=%v", tc.i, r, r.Special())
		}
	}
}

func TestParseMapsErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"1000-zz rw-p 0 00:00 0", "address range"},
		{"2000-1000 rw-p 0 00:00 0", "address range"},
		{"1000-2000 rw 0 00:00 0", "permissions"},
		{"1000-2000 rw-p 0", "at least 5 fields"},
	} {
		if _, err := ParseMaps(tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

func TestParseCPUsAllowed(t *testing.T) {
	text := "Name:\tredis\nCpus_allowed:\t0f\nCpus_allowed_list:\t0-3,8\nMems_allowed_list:\t0-1\n"
	set, err := ParseCPUsAllowed(text)
	if err != nil || set.String() != "0-3,8" {
		t.Fatalf("got %v, %v", set, err)
	}
	if _, err := ParseCPUsAllowed("Name:\tx\n"); err == nil || !strings.Contains(err.Error(), "Cpus_allowed_list") {
		t.Errorf("missing line: %v", err)
	}
	if _, err := ParseCPUsAllowed("Cpus_allowed_list:\t0-x\n"); err == nil || !strings.Contains(err.Error(), "Cpus_allowed_list") {
		t.Errorf("bad list: %v", err)
	}
}

func TestParseNodeMeminfo(t *testing.T) {
	text := "Node 1 MemTotal:        7694540 kB\nNode 1 MemFree:         6561884 kB\nNode 1 MemUsed:         1132656 kB\n"
	m, err := ParseNodeMeminfo(text)
	if err != nil || m.Total != 7694540*1024 || m.Free != 6561884*1024 {
		t.Fatalf("got %+v, %v", m, err)
	}
	for _, bad := range []string{"Node 1 MemTotal: 5 kB\n", "Node 1 MemTotal: x kB\nNode 1 MemFree: 1 kB\n"} {
		if _, err := ParseNodeMeminfo(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseNodeList(t *testing.T) {
	got, err := ParseNodeList("0-1,3\n")
	if err != nil || FormatNodeList(got) != "0,1,3" {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"a", "0-2000", "-1"} {
		if _, err := ParseNodeList(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestMargin(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		m     Margin
		total uint64
		want  uint64
	}{
		{DefaultMargin, 4 * gib, 256 << 20}, // 3 % is 123 MiB
		{DefaultMargin, 100 * gib, 3 * gib}, // 3 % is 3 GiB
		{Margin{MinBytes: 64 << 20}, 64 * gib, 64 << 20},
		{Margin{Percent: 10}, 10 * gib, gib},
	}
	for _, tc := range tests {
		if got := tc.m.For(tc.total); got != tc.want {
			t.Errorf("%s of %d: %d, want %d", tc.m, tc.total, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want Margin
	}{
		{"256Mi,3%", Margin{MinBytes: 256 << 20, Percent: 3}},
		{"64Mi", Margin{MinBytes: 64 << 20}},
		{"5%", Margin{Percent: 5}},
		{"1048576", Margin{MinBytes: 1 << 20}},
	} {
		if got, err := ParseMargin(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseMargin(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "12MB", "101%", "-1", "x%"} {
		if _, err := ParseMargin(bad); err == nil {
			t.Errorf("ParseMargin(%q): no error", bad)
		}
	}
}

func TestLocalRatio(t *testing.T) {
	tests := []struct {
		pages NodePages
		local []int
		want  int
	}{
		{NodePages{}, []int{0}, 100},
		{NodePages{0: 43, 1: 57}, []int{0}, 43},
		{NodePages{0: 999, 1: 1}, []int{0}, 99}, // rounds down: 100 means nothing remote
		{NodePages{0: 1, 1: 1, 2: 2}, []int{0, 1}, 50},
	}
	for _, tc := range tests {
		if got := LocalRatio(tc.pages, tc.local); got != tc.want {
			t.Errorf("%v local %v: %d, want %d", tc.pages, tc.local, got, tc.want)
		}
	}
}

func TestBreakdownOf(t *testing.T) {
	maps, err := ParseNumaMaps(readTestdata(t, "numa_maps_two_nodes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	pm := ProcessMemory{PID: 1, Mappings: maps, BasePageKB: 4}
	b := BreakdownOf([]ProcessMemory{pm, pm})
	want := Breakdown{
		Huge:    NodePages{0: 2 * 512, 1: 2 * (1024 + 262144)},
		Heap:    NodePages{0: 2 * 20000, 1: 2 * 30000},
		Stack:   NodePages{0: 2 * 33},
		Private: NodePages{0: 2 * (200 + 5 + 500 + 5 + 8), 1: 2 * (110 + 15 + 500 + 300 + 64 + 5 + 2048)},
	}
	for name, pair := range map[string][2]NodePages{"huge": {b.Huge, want.Huge}, "heap": {b.Heap, want.Heap},
		"stack": {b.Stack, want.Stack}, "private": {b.Private, want.Private}} {
		if pair[0].Total() != pair[1].Total() || pair[0][0] != pair[1][0] || pair[0][1] != pair[1][1] {
			t.Errorf("%s: %v, want %v", name, pair[0], pair[1])
		}
	}
	var all uint64
	for _, m := range maps {
		all += 2 * m.BasePages(4).Total()
	}
	if b.Total().Total() != all {
		t.Errorf("total %d, want %d", b.Total().Total(), all)
	}
}
