package topology

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"k8s.io/utils/cpuset"
)

// RenderTable writes the human view of t: a summary line, one row per NUMA
// node, one row per L3 group, the node distance matrix and the devices
// under their nodes. It covers what
// `numactl -H` and `lscpu -e` say between them, in one place.
func RenderTable(w io.Writer, t *Topology) error { return RenderTableHeld(w, t, nil) }

// RenderTableHeld is RenderTable with, after each device, the workloads
// heldBy names for its address (who holds a device is the agent's to say,
// not the machine's: pkg/view's Snapshot.DeviceHolders).
func RenderTableHeld(w io.Writer, t *Topology, heldBy map[string][]string) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	s := summarize(t)
	fmt.Fprintln(tw, s.line(t))
	fmt.Fprintf(tw, "isolated CPUs: %s\n\n", listOrNone(t.Isolated, "none"))

	sizes := HugePageSizes(t)
	fmt.Fprint(tw, "NODE\tSOCKETS\tCPUS\tCORES\tTHREADS\tMEM TOTAL\tMEM FREE\t")
	for _, size := range sizes {
		fmt.Fprintf(tw, "HUGE %s FREE/TOTAL\t", HugePageSizeName(size))
	}
	fmt.Fprintln(tw)
	for _, n := range t.Nodes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\t%s\t", n.ID, listOrNone(s.nodeSockets[n.ID], "-"),
			listOrNone(n.CPUs, "-"), s.nodeCores[n.ID].Size(), n.CPUs.Size(),
			HumanBytes(n.MemoryTotal), HumanBytes(n.MemoryFree))
		for _, size := range sizes {
			fmt.Fprintf(tw, "%s\t", hugePagesCell(n.HugePagesOf(size)))
		}
		if n.CPUs.IsEmpty() {
			fmt.Fprint(tw, "memory-only")
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprintln(tw)
	if len(s.l3IDs) == 0 {
		fmt.Fprintln(tw, "L3 caches: none reported")
	} else {
		fmt.Fprintln(tw, "L3\tNODES\tCORES\tCPUS")
		for _, id := range s.l3IDs {
			g := s.l3[id]
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", id, g.nodes.String(), g.cores.Size(), g.cpus.String())
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	buf.WriteString("\n")
	writeDistances(&buf, t)
	if err := writeDevices(&buf, t, heldBy); err != nil {
		return err
	}
	return writeTrimmed(w, buf.Bytes())
}

// writeDistances prints the SLIT matrix laid out as `numactl -H` does.
func writeDistances(buf *bytes.Buffer, t *Topology) {
	width := 3
	for _, n := range t.Nodes {
		width = max(width, len(fmt.Sprint(n.ID))+1)
		for _, d := range n.Distances {
			width = max(width, len(fmt.Sprint(d))+1)
		}
	}
	buf.WriteString("node distances:\nnode ")
	for _, n := range t.Nodes {
		fmt.Fprintf(buf, " %*d", width, n.ID)
	}
	buf.WriteString("\n")
	for _, n := range t.Nodes {
		fmt.Fprintf(buf, "%*d:", 4, n.ID)
		for _, d := range n.Distances {
			fmt.Fprintf(buf, " %*d", width, d)
		}
		buf.WriteString("\n")
	}
}

// writeTrimmed drops the padding tabwriter leaves after a row's last cell.
func writeTrimmed(w io.Writer, b []byte) error {
	lines := strings.SplitAfter(string(b), "\n")
	var out strings.Builder
	for _, l := range lines {
		trimmed := strings.TrimRight(l, " \n")
		out.WriteString(trimmed)
		if strings.HasSuffix(l, "\n") {
			out.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// l3Group is one L3 cache; nodes can be several under Intel sub-NUMA clustering.
type l3Group struct{ cpus, cores, nodes cpuset.CPUSet }

type l3Members struct{ cpus, cores, nodes []int }

// summary holds the groupings the table needs, computed in one pass over CPUs.
type summary struct {
	sockets, dies, cores cpuset.CPUSet
	nodeSockets          map[int]cpuset.CPUSet
	nodeCores            map[int]cpuset.CPUSet
	l3                   map[int]*l3Group
	l3IDs                []int
}

func summarize(t *Topology) summary {
	var sockets, dies, cores []int
	nodeSockets, nodeCores := map[int][]int{}, map[int][]int{}
	l3 := map[int]*l3Members{}
	for _, c := range t.CPUs {
		sockets, dies, cores = append(sockets, c.Socket), append(dies, c.Die), append(cores, c.Core)
		nodeSockets[c.NUMA] = append(nodeSockets[c.NUMA], c.Socket)
		nodeCores[c.NUMA] = append(nodeCores[c.NUMA], c.Core)
		if c.L3 < 0 {
			continue
		}
		g := l3[c.L3]
		if g == nil {
			g = &l3Members{}
			l3[c.L3] = g
		}
		g.cpus, g.cores, g.nodes = append(g.cpus, c.ID), append(g.cores, c.Core), append(g.nodes, c.NUMA)
	}
	s := summary{sockets: cpuset.New(sockets...), dies: cpuset.New(dies...), cores: cpuset.New(cores...),
		nodeSockets: map[int]cpuset.CPUSet{}, nodeCores: map[int]cpuset.CPUSet{}, l3: map[int]*l3Group{}}
	for _, n := range t.Nodes {
		s.nodeSockets[n.ID] = cpuset.New(nodeSockets[n.ID]...)
		s.nodeCores[n.ID] = cpuset.New(nodeCores[n.ID]...)
	}
	for id, g := range l3 {
		s.l3[id] = &l3Group{cpus: cpuset.New(g.cpus...), cores: cpuset.New(g.cores...), nodes: cpuset.New(g.nodes...)}
		s.l3IDs = append(s.l3IDs, id)
	}
	sort.Ints(s.l3IDs)
	return s
}

func (s summary) line(t *Topology) string {
	memOnly := 0
	for _, n := range t.Nodes {
		if n.CPUs.IsEmpty() {
			memOnly++
		}
	}
	parts := []string{plural(s.sockets.Size(), "socket")}
	// Dies are worth a mention only where a package holds more than one.
	if s.dies.Size() != s.sockets.Size() {
		parts = append(parts, plural(s.dies.Size(), "die"))
	}
	nodes := plural(len(t.Nodes), "NUMA node")
	if memOnly > 0 {
		nodes += fmt.Sprintf(" (%d memory-only)", memOnly)
	}
	parts = append(parts, nodes, plural(s.cores.Size(), "core"), plural(len(t.CPUs), "thread"),
		plural(len(s.l3IDs), "L3 group"))
	return strings.Join(parts, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func listOrNone(set cpuset.CPUSet, none string) string {
	if set.IsEmpty() {
		return none
	}
	return set.String()
}

// HumanBytes formats a byte count in binary units with one decimal: "384.0 GiB".
func HumanBytes(b uint64) string {
	units := []string{"TiB", "GiB", "MiB", "KiB"}
	for i, u := range units {
		size := uint64(1) << (10 * (len(units) - i))
		if b >= size {
			return fmt.Sprintf("%.1f %s", float64(b)/float64(size), u)
		}
	}
	return fmt.Sprintf("%d B", b)
}

// HugePageSizes are the page sizes, in KiB, of which some node of t has a
// pool, smallest first: the only sizes worth a column.
func HugePageSizes(t *Topology) []uint64 {
	var sizes []uint64
	for _, n := range t.Nodes {
		for _, h := range n.HugePages {
			if h.Total > 0 && !slices.Contains(sizes, h.SizeKiB) {
				sizes = append(sizes, h.SizeKiB)
			}
		}
	}
	slices.Sort(sizes)
	return sizes
}

// HugePageSizeName is a page size as people write it: "2MiB", "1GiB".
func HugePageSizeName(sizeKiB uint64) string {
	for _, u := range []struct {
		name string
		kib  uint64
	}{{"GiB", 1 << 20}, {"MiB", 1 << 10}} {
		if sizeKiB >= u.kib && sizeKiB%u.kib == 0 {
			return fmt.Sprintf("%d%s", sizeKiB/u.kib, u.name)
		}
	}
	return fmt.Sprintf("%dKiB", sizeKiB)
}

// hugePagesCell is "384/512 (768.0 MiB/1.0 GiB)": free and reserved pages,
// then the same in bytes; "-" for a node without the pool.
func hugePagesCell(h HugePages) string {
	if h.Total == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%s/%s)", h.Free, h.Total, HumanBytes(h.Bytes(h.Free)), HumanBytes(h.Bytes(h.Total)))
}
