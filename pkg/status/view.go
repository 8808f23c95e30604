package status

import (
	"fmt"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/view"
)

// TopologySummary is a one-line description such as
// "1 socket, 1 NUMA node, 2 cores, 2 CPUs".
func TopologySummary(t *topology.Topology) string {
	sockets, cores := map[int]bool{}, map[int]bool{}
	for _, c := range t.CPUs {
		sockets[c.Socket], cores[c.Core] = true, true
	}
	return fmt.Sprintf("%s, %s, %s, %s", plural(len(sockets), "socket"), plural(len(t.Nodes), "NUMA node"),
		plural(len(cores), "core"), plural(len(t.CPUs), "CPU"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ViewSnapshot is an agent's status drawn on topology t, for the views (no
// usage yet: a sample.Sampler adds it). A status without a time (no
// reconcile yet) owns nothing.
func ViewSnapshot(st Status, t *topology.Topology) view.Snapshot {
	snap := view.Snapshot{Time: st.Time, Agent: !st.Time.IsZero(), Topology: t,
		Pools: view.Pools{Reserved: st.Node.Reserved, Exclusive: st.Node.Exclusive, Shared: st.Node.Shared, BE: st.Node.BE}}
	switch {
	case st.ConfigError != "":
		snap.Note = "config error (last good config in force): " + st.ConfigError
	case len(st.Node.Problems) > 0:
		snap.Note = "node problem: " + strings.Join(st.Node.Problems, "; ")
	}
	for _, ws := range st.Workloads {
		w := view.Workload{Name: ws.Name, Cgroup: ws.Cgroup, QOSClass: ws.QOSClass, Pool: ws.Pool, CPUs: ws.CPUs,
			NUMANodes: ws.NUMANodes, PIDs: len(ws.PIDs), Problems: ws.Problems, Devices: ws.Devices}
		// cpuset.mems as the agent wrote it; text it cannot read leaves
		// the views on the CPUs' nodes.
		if mems, err := topology.ParseCPUList(ws.Mems); err == nil && !mems.IsEmpty() {
			w.MemNodes = mems.List()
		}
		// What the agent counts the workload as holding on each node, which
		// the views show as held in place of what it uses now.
		for _, m := range ws.MemoryByNode {
			if w.MemoryHeldByNode == nil {
				w.MemoryHeldByNode = map[int]uint64{}
			}
			w.MemoryHeldByNode[m.Node] += m.Bytes
		}
		if ws.LibvirtDomain != "" {
			w.VM = view.NewVM(ws.LibvirtDomain, ws.ContainerCPUs)
		}
		if m := ws.MemoryLocality; m != nil {
			w.Migration = &view.Migration{Time: m.Time, Reason: m.Reason, LocalRatio: m.LocalRatio, PagesMigrated: m.PagesMigrated}
		}
		snap.Workloads = append(snap.Workloads, w)
	}
	return snap
}
