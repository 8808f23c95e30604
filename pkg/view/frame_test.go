package view

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// Whatever the machine and the terminal, a frame never draws outside it.
func TestFrameFitsEveryTerminal(t *testing.T) {
	snaps := map[string]*Snapshot{"small-agent": smallAgent(), "memnode-agent": memnodeAgent(), "huge-agent": hugeAgent()}
	for _, s := range append(fixture.Shipped(), fixture.WithDevices()...) {
		snaps[s.Name] = machineOnly(s)
	}
	sizes := [][2]int{{0, 0}, {39, 8}, {40, 7}, {40, 8}, {50, 12}, {60, 20}, {80, 24}, {100, 30}, {132, 43}, {200, 60}}
	for name, snap := range snaps {
		for _, sz := range sizes {
			for _, o := range []FrameOptions{{}, {Sort: SortCPU, Filter: "e", Paused: true, Err: strings.Repeat("refused ", 40)}, {EditingFilter: true}} {
				o.Width, o.Height = sz[0], sz[1]
				lines := Frame(snap, o)
				if len(lines) > max(o.Height, 1) || len(lines) == 0 {
					t.Errorf("%s %dx%d: %d lines", name, o.Width, o.Height, len(lines))
				}
				for i, l := range lines {
					if lineWidth(l) > max(o.Width, 0) {
						t.Errorf("%s %dx%d: line %d is %d wide: %q", name, o.Width, o.Height, i, lineWidth(l), l.String())
					}
				}
				small := o.Width < MinWidth || o.Height < MinHeight
				if small != strings.Contains(lines[0].String(), "too small") && o.Width > 20 {
					t.Errorf("%s %dx%d: first line %q", name, o.Width, o.Height, lines[0].String())
				}
			}
		}
	}
}

// The frames as a user sees them: full node bars when they fit, one line
// per node when not, some nodes when not even that.
func TestFrameText(t *testing.T) {
	cases := []struct {
		name string
		snap *Snapshot
		o    FrameOptions
		want string
	}{
		{"small machine with an agent", smallAgent(), FrameOptions{Width: 80, Height: 24}, `
locus top · agent 127.0.0.1:9316 · 09:26:53                          sort name ↑
1 socket, 1 NUMA node, 4 cores, 4 CPUs, 1 L3 group
CPUs: exclusive 2 · shared 1 · reserved 1
node 0 · CPUs 0-3 · busy 45% · mem 6.0G/16G used · held 1.5G
  #BB=
  ▁▇▅▂

  NAME   QOS  POOL       CPUS  NUMA   CPU%   MEM  LOCAL  LAST MIGRATION
A batch  BE   be         3     0      25.0   64M   100%  -
B redis  LS   exclusive  1-2   0     150.0  1.5G   100%  09:25 completed 1000p
n name · c cpu · m mem · l local · r reverse · / filter · space pause · q quit
`},
		{"nodes in one line each", memnodeAgent(), FrameOptions{Width: 50, Height: 12, Sort: SortMemory}, `
locus top · agent 127.0.0.1:9316 · 09:… sort mem ↓
2 sockets, 3 NUMA nodes, 16 cores, 32 CPUs, 2 L3 g
n0 ##BBBBcc======== 56% 16G/64G
n1 ========~~~~~~~~ 10% 16G/64G
n2 memory only - 16G/64G

  NAME     QOS  CPUS   NUMA   CPU%   MEM  LOCAL
B redis    LS   2-5    0     250.0  9.0G    66%
C vm1      LS   6-7    0      40.0  4.0G   100%
A batch !  BE   24-31  1         -  512M   100%
D web      LS   6-31   0,1       -     -      -
n c m l sort · r rev · / filter · space pause · q
`},
		{"wide: every column", memnodeAgent(), FrameOptions{Width: 132, Height: 30, Filter: "ba"}, `
locus top · agent 127.0.0.1:9316 · 09:26:53                                                                sort name ↑ · filter “ba”
2 sockets, 3 NUMA nodes, 16 cores, 32 CPUs, 2 L3 groups
CPUs: exclusive 4 · static-burst 2 · shared 16 · be 8 · reserved 2
node 0 · CPUs 0-15 · busy 56% · mem 16G/64G used · held 10G
  ##BBBBcc ========
  --█▆▄▂▂- --------
node 1 · CPUs 16-31 · busy 10% · mem 16G/64G used · held 0B
  ======== ~~~~~~~~
  -------- ▁-------
node 2 · memory only · busy - · mem 16G/64G used · held 0B

  NAME     QOS  POOL  CPUS   NUMA  CPU%   MEM  LOCAL  MEM BY NODE  LAST MIGRATION  PROBLEMS
A batch !  BE   be    24-31  1        -  512M   100%  1:512M       -               CgroupWriteFailed: EBUSY
n name · c cpu · m mem · l local · r reverse · / filter · space pause · q quit
`},
		{"unequal nodes, huge pages on one, memory held", hugeAgent(), FrameOptions{Width: 80, Height: 16}, `
locus top · agent 127.0.0.1:9316 · 09:26:53                          sort name ↑
2 sockets, 2 NUMA nodes, 8 cores, 8 CPUs, 2 L3 groups
CPUs: exclusive 4 · shared 4
node 0 · CPUs 0-3 · busy - · mem 12G/16G used · held 12G
  AA==
  ----
node 1 · CPUs 4-7 · busy - · mem 44G/64G used · held 40G
  huge pages 2MiB 128 held 384 free · 1GiB 1 held 3 free
  BB==
  ----

  NAME   QOS  POOL       CPUS  NUMA  CPU%  MEM  LOCAL  MEM BY NODE
A cache  LS   exclusive  0-1   0        -  12G    83%  0:10G 1:2.0G
B db     LS   exclusive  4-5   1        -  30G   100%  1:30G
n name · c cpu · m mem · l local · r reverse · / filter · space pause · q quit
`},
		{"huge pages in one line per node", hugeAgent(), FrameOptions{Width: 60, Height: 10}, `
locus top · agent 127.0.0.1:9316 · 09:26:53      sort name ↑
2 sockets, 2 NUMA nodes, 8 cores, 8 CPUs, 2 L3 groups
n0 AA== - 12G/16G
n1 BB== - 44G/64G huge 2MiB:384 1GiB:3 free

  NAME   QOS  POOL       CPUS  NUMA  MEM  LOCAL
A cache  LS   exclusive  0-1   0     12G    83%
B db     LS   exclusive  4-5   1     30G   100%
n c m l sort · r rev · / filter · space pause · q
`},
		{"no agent: the topology's huge pages, nothing held", machineOnly(unequalHuge), FrameOptions{Width: 80, Height: 12, Static: true}, `
locus top · host · 09:26:53                                          sort name ↑
2 sockets, 2 NUMA nodes, 8 cores, 8 CPUs, 2 L3 groups
node 0 · CPUs 0-3 · busy - · mem 4.0G/16G used
  ....
  ----
node 1 · CPUs 4-7 · busy - · mem 16G/64G used
  huge pages 2MiB 0 held 512 free · 1GiB 0 held 4 free
  ....
  ----

  NAME  QOS  POOL  CPUS  NUMA  CPU%  MEM  LOCAL  MEM BY NODE  LAST MIGRATION
  no agent: no workloads to show
`},
		{"no agent, eight nodes", machineOnly(fixture.AMDNPS4), FrameOptions{Width: 80, Height: 11, Static: true}, `
locus top · host · 09:26:53                                          sort name ↑
2 sockets, 8 NUMA nodes, 128 cores, 256 CPUs, 16 L3 groups
n0 ................................ - 32G/128G
n1 ................................ - 32G/128G
n2 ................................ - 32G/128G
n3 ................................ - 32G/128G
n4 ................................ - 32G/128G
… 3 more NUMA nodes (a larger terminal shows them)

  NAME  QOS  POOL  CPUS  NUMA  CPU%  MEM  LOCAL  MEM BY NODE  LAST MIGRATION
  no agent: no workloads to show
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Plain(Frame(tc.snap, tc.o))
			if want := strings.TrimPrefix(tc.want, "\n"); got != want {
				t.Errorf("frame:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestSortAndFilter(t *testing.T) {
	cases := []struct {
		o    FrameOptions
		want []string
	}{
		{FrameOptions{}, []string{"batch", "redis", "vm1", "web"}},
		{FrameOptions{Reverse: true}, []string{"web", "vm1", "redis", "batch"}},
		// Unknown values go last whichever the direction; ties by name.
		{FrameOptions{Sort: SortCPU}, []string{"redis", "vm1", "batch", "web"}},
		{FrameOptions{Sort: SortCPU, Reverse: true}, []string{"vm1", "redis", "batch", "web"}},
		{FrameOptions{Sort: SortMemory}, []string{"redis", "vm1", "batch", "web"}},
		{FrameOptions{Sort: SortLocal}, []string{"redis", "batch", "vm1", "web"}},
		{FrameOptions{Sort: SortLocal, Reverse: true}, []string{"batch", "vm1", "redis", "web"}},
		{FrameOptions{Filter: "B"}, []string{"batch", "web"}},
		{FrameOptions{Filter: "nothing"}, nil},
	}
	for _, tc := range cases {
		var got []string
		for _, w := range filterSort(memnodeAgent().Workloads, tc.o) {
			got = append(got, w.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.o, got, tc.want)
		}
	}
}

// The header says what the user asked for, and the footer what the keys do.
func TestFrameStates(t *testing.T) {
	cases := []struct {
		o          FrameOptions
		head, foot string
	}{
		{FrameOptions{Sort: SortCPU}, "sort cpu ↓", "n name · c cpu"},
		{FrameOptions{Sort: SortCPU, Reverse: true}, "sort cpu ↑", "q quit"},
		{FrameOptions{Paused: true, Filter: "re"}, "sort name ↑ · filter “re” · PAUSED", "space pause"},
		{FrameOptions{EditingFilter: true, Filter: "re"}, "filter “re”", "filter: re▏  enter keeps it · esc clears it"},
		{FrameOptions{Static: true}, "sort name", "B redis"},
	}
	for _, tc := range cases {
		tc.o.Width, tc.o.Height = 100, 30
		lines := Frame(smallAgent(), tc.o)
		if head, foot := lines[0].String(), lines[len(lines)-1].String(); !strings.Contains(head, tc.head) || !strings.Contains(foot, tc.foot) {
			t.Errorf("%+v:\nhead %q, want %q\nfoot %q, want %q", tc.o, head, tc.head, foot, tc.foot)
		}
	}
	o := FrameOptions{Width: 80, Height: 24, Err: "connection refused"}
	if l := Frame(smallAgent(), o)[3]; l.String() != "connection refused" || l[0].Style.Role != RoleWarn {
		t.Errorf("line 3 %+v, want the error", l)
	}
}

// Each CPU's cell is styled by its owner, so the terminal colours it.
func TestFrameCellStyles(t *testing.T) {
	lines := Frame(memnodeAgent(), FrameOptions{Width: 80, Height: 24})
	var row Line
	for i, l := range lines {
		if strings.HasPrefix(l.String(), "node 0") {
			row = lines[i+1]
		}
	}
	want := []Style{{Role: RoleText}, {Role: RoleCell, Kind: KindReserved}, {Role: RoleCell, Kind: KindExclusive, Workload: "redis"},
		{Role: RoleCell, Kind: KindBurst, Workload: "vm1"}, {Role: RoleText}, {Role: RoleCell, Kind: KindShared}}
	var got []Style
	for _, sp := range row {
		got = append(got, sp.Style)
	}
	if !slices.Equal(got, want) {
		t.Errorf("node 0 cells %q styled %+v, want %+v", row.String(), got, want)
	}
	fg, bg := (Style{Role: RoleCell, Kind: KindExclusive, Workload: "redis"}).Colors(Colors(memnodeAgent().Workloads))
	if bg != palette[1] || fg != "#ffffff" {
		t.Errorf("redis cell colours %s on %s, want white on its palette colour %s", fg, bg, palette[1])
	}
}

func TestOwnersAndNodeCounts(t *testing.T) {
	s := memnodeAgent()
	owners := Owners(s)
	want := map[int]Owner{0: {Kind: KindReserved}, 2: {KindExclusive, "redis"}, 5: {KindExclusive, "redis"},
		6: {KindBurst, "vm1"}, 8: {Kind: KindShared}, 23: {Kind: KindShared}, 24: {Kind: KindBE}, 31: {Kind: KindBE}}
	for id, o := range want {
		if owners[id] != o {
			t.Errorf("CPU %d owner %+v, want %+v", id, owners[id], o)
		}
	}
	counts := NodeCPUs(s)
	wantCounts := map[int]map[Kind]int{
		0: {KindExclusive: 4, KindBurst: 2, KindShared: 8, KindBE: 0, KindReserved: 2, KindIdle: 0},
		1: {KindExclusive: 0, KindBurst: 0, KindShared: 8, KindBE: 8, KindReserved: 0, KindIdle: 0},
		2: {KindExclusive: 0, KindBurst: 0, KindShared: 0, KindBE: 0, KindReserved: 0, KindIdle: 0},
	}
	if fmt.Sprint(counts) != fmt.Sprint(wantCounts) {
		t.Errorf("node counts %v, want %v", counts, wantCounts)
	}
	// Without an agent nobody owns anything; isolated CPUs are idle.
	for id, o := range Owners(machineOnly(fixture.Small4)) {
		if o != (Owner{Kind: KindIdle}) {
			t.Errorf("no agent: CPU %d owner %+v", id, o)
		}
	}
	iso := smallAgent()
	iso.Topology.Isolated = parseList("3")
	iso.Pools.Shared, iso.Pools.BE = "", ""
	if o := Owners(iso)[3]; o.Kind != KindIdle {
		t.Errorf("isolated CPU owner %+v", o)
	}
}

func TestFormats(t *testing.T) {
	for b, want := range map[uint64]string{0: "0B", 1023: "1023B", 1024: "1.0K", 10 << 20: "10M", 3 << 29: "1.5G", 5 << 40: "5.0T"} {
		if got := shortBytes(b); got != want {
			t.Errorf("shortBytes(%d) = %q, want %q", b, got, want)
		}
	}
	if got := byNode(map[int]uint64{1: 2 << 20, 0: 1 << 30}); got != "0:1.0G 1:2.0M" {
		t.Errorf("byNode = %q", got)
	}
	for busy, want := range map[float64]int{0: 0, 0.005: 0, 0.02: 1, 0.5: 4, 1: 8, 2: 8} {
		if got := busyLevel(busy); got != want {
			t.Errorf("busyLevel(%v) = %d, want %d", busy, got, want)
		}
	}
	if (Migration{Reason: "MemoryLocalitySkipped"}).Result() != "skipped" {
		t.Error("Result of MemoryLocalitySkipped")
	}
}

// lineWidth is the number of cells l takes.
func lineWidth(l Line) int {
	n := 0
	for _, s := range l {
		n += utf8.RuneCountInString(s.Text)
	}
	return n
}
