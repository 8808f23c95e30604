package view

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/topology/fixture"
)

// vmAgent is the four-CPU machine with a dedicated VM: vm web-front's
// vCPUs each on a CPU of their own (2 and 3), its emulator in the shared
// pool (CPU 1), and a plain VM whose threads share the workload's CPUs.
func vmAgent() *Snapshot {
	return &Snapshot{Time: t0, Source: "agent 127.0.0.1:9316", Agent: true, Topology: fixture.MustBuild(fixture.Small4),
		Pools: Pools{Reserved: "0", Exclusive: "2-3", Shared: "1"},
		Workloads: []Workload{
			{Name: "web", QOSClass: "LSR", Pool: "exclusive", CPUs: "2-3", NUMANodes: []int{0}, MemNodes: []int{0}, PIDs: 3,
				VM: NewVM("web-front", map[string]string{"emulator": "1", "vcpu1": "3", "vcpu0": "2"})},
			{Name: "plain", QOSClass: "LS", Pool: "shared", CPUs: "1", NUMANodes: []int{0}, PIDs: 2,
				VM: NewVM("plain-vm", nil)},
			{Name: "redis", QOSClass: "LS", Pool: "shared", CPUs: "1", NUMANodes: []int{0}, PIDs: 1},
		},
	}
}

func TestNewVMOrdersThreads(t *testing.T) {
	cases := []struct {
		threads map[string]string
		want    []VMThread
	}{
		{nil, nil},
		{map[string]string{"emulator": "0", "vcpu0": "2"}, []VMThread{{"vcpu0", "2"}, {"emulator", "0"}}},
		{map[string]string{"vcpu10": "9", "vcpu2": "3", "iothread1": "1", "vcpu01": "5", "emulator": "0"},
			[]VMThread{{"vcpu2", "3"}, {"vcpu10", "9"}, {"emulator", "0"}, {"iothread1", "1"}, {"vcpu01", "5"}}},
	}
	for _, c := range cases {
		if got := NewVM("d", c.threads); got.Domain != "d" || !slices.Equal(got.Threads, c.want) {
			t.Errorf("NewVM(%v) = %+v, want threads %v", c.threads, got, c.want)
		}
	}
}

// locus top names each VM's domain, nodes and where each vCPU runs, under
// the table, in the table's order.
func TestFrameShowsVMs(t *testing.T) {
	got := "\n" + Plain(Frame(vmAgent(), FrameOptions{Width: 80, Height: 20, Static: true}))
	want := `
locus top · agent 127.0.0.1:9316 · 09:26:53                          sort name ↑
1 socket, 1 NUMA node, 4 cores, 4 CPUs, 1 L3 group
CPUs: exclusive 2 · shared 1 · reserved 1
node 0 · CPUs 0-3 · busy - · mem 4.0G/16G used
  #=CC
  ----

  NAME   QOS  POOL       CPUS  NUMA  CPU%  MEM  LOCAL  LAST MIGRATION
A plain  LS   shared     1     0        -    -      -  -
B redis  LS   shared     1     0        -    -      -  -
C web    LSR  exclusive  2-3   0        -    -      -  -
  VMs
  plain  VM plain-vm · node 0 · every thread on 1
  web    VM web-front · node 0 · vcpu0 2 · vcpu1 3 · emulator 1
`
	if got != want {
		t.Errorf("frame:\n%s\nwant:%s", got, want)
	}
	// Filtered out of the table, a VM leaves the VM lines too.
	if f := Plain(Frame(vmAgent(), FrameOptions{Width: 80, Height: 20, Static: true, Filter: "redis"})); strings.Contains(f, "VM") {
		t.Errorf("filtered to redis, the frame still shows a VM:\n%s", f)
	}
	// A short terminal keeps the table and drops the VM lines first.
	short := Plain(Frame(vmAgent(), FrameOptions{Width: 80, Height: 8, Static: true}))
	if strings.Contains(short, "VMs") || !strings.Contains(short, "web") {
		t.Errorf("8 lines: want the table without the VM lines:\n%s", short)
	}
}

// Whatever the terminal, the VM lines stay inside it.
func TestFrameWithVMsFitsEveryTerminal(t *testing.T) {
	for _, sz := range [][2]int{{40, 8}, {50, 12}, {60, 14}, {80, 24}, {132, 43}} {
		lines := Frame(vmAgent(), FrameOptions{Width: sz[0], Height: sz[1]})
		if len(lines) > sz[1] {
			t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(lines))
		}
		for i, l := range lines {
			if lineWidth(l) > sz[0] {
				t.Errorf("%dx%d: line %d is %d wide: %q", sz[0], sz[1], i, lineWidth(l), l.String())
			}
		}
	}
}

// The map says which vCPU holds each of a dedicated VM's CPUs, and the
// legend where every thread runs.
func TestSVGNamesVCPUs(t *testing.T) {
	svg := string(SVG(vmAgent()))
	for _, want := range []string{
		"CPU 2 · core 2 · exclusive: web · vcpu0 of web-front</title>",
		"CPU 3 · core 3 · exclusive: web · vcpu1 of web-front</title>",
		"VM web-front: vcpu0 2 · vcpu1 3 · emulator 1",
		"VM plain-vm: every thread on 1",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the map has no %q:\n%s", want, svg)
		}
	}
	// The emulator's CPU is the shared pool's, not the VM's.
	if strings.Contains(svg, "emulator of") {
		t.Errorf("a shared CPU is drawn as the emulator's:\n%s", svg)
	}
}

// /ui/snapshot.json, which locus top reads from the agent, carries the VM.
func TestSnapshotJSONCarriesVM(t *testing.T) {
	b, err := json.Marshal(vmAgent())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"vm":{"domain":"web-front","threads":[{"name":"vcpu0","cpus":"2"},{"name":"vcpu1","cpus":"3"},{"name":"emulator","cpus":"1"}]}`) {
		t.Errorf("snapshot JSON:\n%s", b)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if w := back.Workloads[0]; w.VM == nil || w.VM.Domain != "web-front" || len(w.VM.Threads) != 3 || back.Workloads[2].VM != nil {
		t.Errorf("read back: %+v", back.Workloads)
	}
}
