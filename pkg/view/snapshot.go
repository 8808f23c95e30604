// Package view draws a host as Locus sees it: the terminal frame of `locus
// top` and the SVG topology map of `locus topology --svg` and the agent's
// /ui page. Everything here is pure: a Snapshot goes in, lines or bytes come
// out. Shells gather the Snapshot (pkg/agent's /ui endpoints, pkg/view/sample
// for what the host uses, cmd/locus for the terminal).
package view

import (
	"sort"
	"strings"
	"time"

	"github.com/locus-project/locus/pkg/topology"
)

// Snapshot is one moment of a host: the machine, who owns each CPU and what
// each workload uses. It is also the JSON the agent serves at
// /ui/snapshot.json for `locus top`.
type Snapshot struct {
	Time time.Time `json:"time"`
	// Source says where the snapshot came from ("agent 127.0.0.1:9316",
	// "host"); Note is an extra line for the reader (why there is no agent).
	Source string `json:"source,omitempty"`
	Note   string `json:"note,omitempty"`
	// Agent is true when Pools and Workloads come from an agent's status;
	// without it every CPU is drawn as idle (no owner known).
	Agent    bool               `json:"agent"`
	Topology *topology.Topology `json:"topology"`
	Pools    Pools              `json:"pools"`
	// Workloads in the agent's order; the views sort them.
	Workloads []Workload `json:"workloads"`
	// CPUBusy is each CPU's busy fraction (0–1) over the last sampling
	// interval. A CPU without an entry is unknown (first sample, or a
	// fixture machine larger than the host).
	CPUBusy map[int]float64 `json:"cpuBusy,omitempty"`
	// NodeMemory is each node's memory now; a node without an entry shows
	// the topology's figures.
	NodeMemory map[int]NodeMemory `json:"nodeMemory,omitempty"`
}

// Pools are the agent's CPU pools, in Linux list format.
type Pools struct {
	Reserved  string `json:"reserved,omitempty"`
	Exclusive string `json:"exclusive,omitempty"`
	Shared    string `json:"shared,omitempty"`
	BE        string `json:"be,omitempty"`
}

// NodeMemory is one NUMA node's memory in bytes, and its huge page pools
// (nil: the topology's figures).
type NodeMemory struct {
	Total     uint64               `json:"totalBytes"`
	Free      uint64               `json:"freeBytes"`
	HugePages []topology.HugePages `json:"hugePages,omitempty"`
}

// Workload is one workload as the views show it.
type Workload struct {
	Name     string `json:"name"`
	Cgroup   string `json:"cgroup,omitempty"` // relative to the cgroup root
	QOSClass string `json:"qosClass,omitempty"`
	// Pool is exclusive, static-burst, shared or be ("" before a decision).
	Pool      string `json:"pool,omitempty"`
	CPUs      string `json:"cpus,omitempty"`
	NUMANodes []int  `json:"numaNodes,omitempty"`
	// MemNodes are the nodes of its cpuset.mems; nil when unknown.
	MemNodes []int `json:"memNodes,omitempty"`
	PIDs     int   `json:"pids"`
	// VM is the libvirt domain the workload is; nil for any other.
	VM *VM `json:"vm,omitempty"`
	// CPUUsage is in CPUs (1 = one CPU fully busy) over the last sampling
	// interval; nil when unknown.
	CPUUsage *float64 `json:"cpuUsage,omitempty"`
	// MemoryByNode is the workload's memory on each NUMA node in bytes; nil
	// when unknown.
	MemoryByNode map[int]uint64 `json:"memoryByNode,omitempty"`
	// MemoryHeldByNode is the memory the agent accounts the workload as
	// holding on each node (its request, where it is pinned); nil when
	// the agent does not say.
	MemoryHeldByNode map[int]uint64 `json:"memoryHeldByNode,omitempty"`
	Migration        *Migration     `json:"lastMigration,omitempty"`
	Problems         []string       `json:"problems,omitempty"`
	// Devices are the PCI devices it holds, by address: the map names
	// the holder beside each device.
	Devices []string `json:"devices,omitempty"`
}

// Migration is a workload's last memory locality run.
type Migration struct {
	Time          time.Time `json:"time"`
	Reason        string    `json:"reason"`
	LocalRatio    *int      `json:"localRatio,omitempty"`
	PagesMigrated uint64    `json:"pagesMigrated"`
}

// Result is the run's outcome in one word: completed, skipped or failed.
func (m Migration) Result() string {
	r := strings.TrimPrefix(m.Reason, "MemoryLocality")
	return strings.ToLower(r)
}

// MemoryTotal is the workload's memory over every node.
func (w Workload) MemoryTotal() (uint64, bool) {
	if w.MemoryByNode == nil {
		return 0, false
	}
	var sum uint64
	for _, b := range w.MemoryByNode {
		sum += b
	}
	return sum, true
}

// LocalRatio is the percentage of the workload's memory on the nodes of its
// CPUs: measured now when its memory by node is known, else the last
// memory locality run's figure.
func (w Workload) LocalRatio() (int, bool) {
	if total, ok := w.MemoryTotal(); ok && total > 0 && len(w.NUMANodes) > 0 {
		var local uint64
		for _, n := range w.NUMANodes {
			local += w.MemoryByNode[n]
		}
		return int(local * 100 / total), true
	}
	if w.Migration != nil && w.Migration.LocalRatio != nil {
		return *w.Migration.LocalRatio, true
	}
	return 0, false
}

// nodeMemory is a node's memory now, or the topology's figures.
func (s *Snapshot) nodeMemory(n topology.NUMANode) NodeMemory {
	if m, ok := s.NodeMemory[n.ID]; ok {
		return m
	}
	return NodeMemory{Total: n.MemoryTotal, Free: n.MemoryFree}
}

// machineSummary is "2 sockets, 2 NUMA nodes, 16 cores, 32 CPUs, 2 L3".
func machineSummary(t *topology.Topology) string {
	sockets, cores, l3 := map[int]bool{}, map[int]bool{}, map[int]bool{}
	for _, c := range t.CPUs {
		sockets[c.Socket], cores[c.Core] = true, true
		if c.L3 >= 0 {
			l3[c.L3] = true
		}
	}
	return strings.Join([]string{plural(len(sockets), "socket"), plural(len(t.Nodes), "NUMA node"),
		plural(len(cores), "core"), plural(len(t.CPUs), "CPU"), plural(len(l3), "L3 group")}, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return itoa(n) + " " + noun + "s"
}

// sortedNames are the workload names in order, which fixes their colours.
func sortedNames(ws []Workload) []string {
	names := make([]string, len(ws))
	for i, w := range ws {
		names[i] = w.Name
	}
	sort.Strings(names)
	return names
}
