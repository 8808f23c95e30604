package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/balancer/probe"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/topology"
)

type adviseOptions struct {
	cpus, memory, margin, partition, output string
	window                                  time.Duration
	sysfsRoot, procRoot                     string
}

func newAdviseCmd() *cobra.Command {
	var o adviseOptions
	cmd := &cobra.Command{
		Use:   "advise --cpus N [--memory QUANTITY] [-o table|json|nodes]",
		Short: "Advise the best NUMA node(s) for a new VM or process, as numad -w does",
		Long: `Measure how busy every CPU is over --window and how much memory every NUMA
node has free, then name the fewest nodes with the idle CPUs and free memory a
new VM or process of --cpus CPUs and --memory bytes needs, nearest nodes
first; among those that fit, the one the request unbalances least. It is the
answer "numad -w CPUS:MB" gives, with the reason and the alternatives.

-o nodes prints only the node list ("0" or "0-1"), for scripts:
  numactl --cpunodebind=$(locus advise --cpus 4 --memory 8Gi -o nodes) --membind=... qemu-system-x86_64 ...
--partition l3 advises L3 caches instead of nodes (their CPUs are printed).

Exit status: 0 when the request fits; 1 when it does not (the table and the
JSON still show why; -o nodes prints nothing, so a script never binds to a
node list that cannot hold the request) or the machine cannot be read; 2 for a
bad flag, such as a quantity no machine has (--cpus over 65536, --memory
over 1Pi).`,
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.OutOrStdout()) },
	}
	f := cmd.Flags()
	f.StringVar(&o.cpus, "cpus", "", "CPUs the new VM or process will keep busy (2, 1.5, 500m)")
	f.StringVar(&o.memory, "memory", "0", "memory it will hold (512Mi, 8Gi)")
	f.StringVar(&o.margin, "margin", "256Mi", `free memory every node keeps ("256Mi", "3%" or both)`)
	f.StringVar(&o.partition, "partition", "numa", "what to advise: numa (nodes) or l3 (L3 caches)")
	f.DurationVar(&o.window, "window", time.Second, "how long to measure CPU use")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table, json or nodes")
	f.StringVar(&o.sysfsRoot, "sysfs-root", "/sys", "where sysfs is mounted")
	f.StringVar(&o.procRoot, "proc-root", "/proc", "where procfs is mounted")
	return cmd
}

func (o adviseOptions) run(out io.Writer) error {
	if o.cpus == "" {
		return usagef("--cpus is required")
	}
	req, err := adviseRequest(o.cpus, o.memory)
	if err != nil {
		return err
	}
	margin, err := locality.ParseMargin(o.margin)
	if err != nil {
		return usagef("--margin: %v", err)
	}
	kind, err := balancer.ParseKind(o.partition)
	if err != nil {
		return usagef("--partition: %v", err)
	}
	if o.output != "table" && o.output != "json" && o.output != "nodes" {
		return usagef("unknown output format %q: want table, json or nodes", o.output)
	}
	if o.window < 0 {
		return usagef("--window %s is negative", o.window)
	}
	topo, err := topology.Discover(o.sysfsRoot)
	if err != nil {
		return err
	}
	r := probe.Reader{ProcRoot: o.procRoot, SysfsRoot: o.sysfsRoot}
	in, err := measureAdvice(r, topo, balancer.Partitions(topo, kind, topo.CPUSet().Difference(topo.Isolated)), o.window)
	if err != nil {
		return err
	}
	in.MemMargin = minMargin(margin, in.Memory)
	adv := balancer.Advise(in, req)
	switch {
	case o.output == "nodes" && adv.Fits:
		_, err = fmt.Fprintln(out, nodeList(adv.Nodes))
	case o.output == "json":
		err = writeJSON(out, adviceJSON(adv, in, req))
	case o.output == "table":
		err = printAdvice(out, adv, in)
	}
	if err == nil && !adv.Fits {
		err = fmt.Errorf("the request does not fit: %s", adv.Reason)
	}
	return err
}

// maxAdviseCPUs bounds --cpus (maxMachineCPUs); memory has the bound of
// every quantity flag (nonNegativeQuantity).
var maxAdviseCPUs = *resource.NewQuantity(maxMachineCPUs, resource.DecimalSI)

// adviseRequest reads --cpus and --memory. Each is compared as a quantity
// before it is converted, so a huge value is refused by name rather than
// overflowing into a small or negative one.
func adviseRequest(cpusFlag, memFlag string) (balancer.Request, error) {
	cpus, err := boundedQuantity("--cpus", cpusFlag, maxAdviseCPUs, " CPUs")
	if err != nil {
		return balancer.Request{}, err
	}
	if cpus.IsZero() {
		return balancer.Request{}, usagef("--cpus %s: want more than 0 CPUs", cpusFlag)
	}
	mem, err := nonNegativeQuantity("--memory", memFlag)
	if err != nil {
		return balancer.Request{}, err
	}
	return balancer.Request{CPUs: float64(cpus.MilliValue()) / 1000, Memory: uint64(mem.Value())}, nil
}

// measureAdvice reads the partitions' busy CPUs over the window and the
// nodes' free memory. Isolated CPUs are nobody's to advise: the callers
// leave them out of parts.
func measureAdvice(r probe.Reader, topo *topology.Topology, parts []balancer.Partition, window time.Duration) (balancer.AdviceInput, error) {
	before, err := r.CPUStat()
	if err != nil {
		return balancer.AdviceInput{}, err
	}
	time.Sleep(window)
	after, err := r.CPUStat()
	if err != nil {
		return balancer.AdviceInput{}, err
	}
	balancer.SetBusy(parts, before, after)
	mem, err := r.NodeMemory(memoryNodes(topo))
	if err != nil {
		return balancer.AdviceInput{}, err
	}
	return balancer.AdviceInput{Partitions: parts, Memory: mem, Distance: balancer.NodeDistance(topo)}, nil
}

// memoryNodes are the nodes that have memory.
func memoryNodes(topo *topology.Topology) []int {
	var nodes []int
	for _, n := range topo.Nodes {
		if n.MemoryTotal > 0 {
			nodes = append(nodes, n.ID)
		}
	}
	return nodes
}

// minMargin is the margin for the smallest node: a percentage applies per
// node, the advice keeps one figure.
func minMargin(m locality.Margin, mem map[int]balancer.NodeMemory) uint64 {
	var least uint64
	first := true
	for _, n := range mem {
		if b := m.For(n.Total); first || b < least {
			least, first = b, false
		}
	}
	return least
}

func nodeList(nodes []int) string { return cpuset.New(nodes...).String() }

type adviceOut struct {
	Nodes     string                 `json:"nodes"`
	CPUs      string                 `json:"cpus"`
	Request   map[string]any         `json:"request"`
	Advice    balancer.Advice        `json:"advice"`
	Measured  []partitionMeasurement `json:"measured"`
	MemMargin uint64                 `json:"memoryMargin"`
}

type partitionMeasurement struct {
	Name       string  `json:"name"`
	CPUs       string  `json:"cpus"`
	Nodes      []int   `json:"nodes"`
	Busy       float64 `json:"busyCPUs"`
	FreeMemory uint64  `json:"freeMemory"`
}

func measurements(in balancer.AdviceInput) []partitionMeasurement {
	var out []partitionMeasurement
	for _, p := range in.Partitions {
		var free uint64
		for _, n := range p.Nodes {
			free += in.Memory[n].Free
		}
		out = append(out, partitionMeasurement{Name: p.Name, CPUs: p.CPUs.String(), Nodes: p.Nodes,
			Busy: round2(p.Busy), FreeMemory: free})
	}
	return out
}

func adviceJSON(a balancer.Advice, in balancer.AdviceInput, req balancer.Request) adviceOut {
	return adviceOut{Nodes: nodeList(a.Nodes), CPUs: a.CPUs.String(), Advice: a, Measured: measurements(in),
		MemMargin: in.MemMargin, Request: map[string]any{"cpus": req.CPUs, "memory": req.Memory}}
}

func printAdvice(out io.Writer, a balancer.Advice, in balancer.AdviceInput) error {
	fit := ""
	if !a.Fits {
		fit = " (does not fit)"
	}
	fmt.Fprintf(out, "advice: nodes %s, cpus %s%s\n%s\n\n", nodeList(a.Nodes), a.CPUs, fit, a.Reason)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tCPUS\tNODES\tBUSY\tIDLE\tFREE MEMORY\tADVISED")
	for _, m := range measurements(in) {
		advised := "-"
		for _, p := range a.Partitions {
			if p == m.Name {
				advised = "yes"
			}
		}
		nodes := make([]string, len(m.Nodes))
		for i, n := range m.Nodes {
			nodes[i] = strconv.Itoa(n)
		}
		idle := max(float64(cpuCountOf(m.CPUs))-m.Busy, 0)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\n", m.Name, m.CPUs, strings.Join(nodes, ","), m.Busy, idle,
			humanMiB(m.FreeMemory), advised)
	}
	return tw.Flush()
}

func cpuCountOf(list string) int {
	s, _ := topology.ParseCPUList(list)
	return s.Size()
}

func humanMiB(b uint64) string { return fmt.Sprintf("%dMi", b>>20) }

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }
