package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/utils/cpuset"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/topology"
)

// planOptions are the flags of `locus plan`.
type planOptions struct {
	sysfsRoot, topologyFile string
	cpus                    int
	policy, strategy        string
	allocated, reserved     string
	burstLoad               string
	requestMilli            int64
	useReserved             bool
	output                  string
	memory                  planMemoryFlags
	moves                   planMoveFlags
	nearDevices             []string
}

// planJSON is the JSON contract of `locus plan -o json`.
type planJSON struct {
	CPUSet          string `json:"cpuset"`
	NUMANodes       []int  `json:"numaNodes"`
	CPUs            int    `json:"cpus"`
	Policy          string `json:"policy"`
	NUMAStrategy    string `json:"numaStrategy"`
	BurstShareMilli int64  `json:"burstShareMilli,omitempty"`
	// MemNodes are the nodes cpuset.mems names; MemorySpilled says they
	// are more than the CPUs' nodes, because those cannot hold the memory.
	MemNodes      []int       `json:"memNodes"`
	MemorySpilled bool        `json:"memorySpilled,omitempty"`
	Memory        *planMemory `json:"memory,omitempty"` // the request, when it asks for any
	// Moves, with --allow-moves only, are the moves to carry out first, in
	// order (an empty list when none is needed).
	Moves *[]planMove `json:"moves,omitempty"`
	// Devices are the --near-device devices; Near the nodes of those whose
	// node is known, and Aligned, set with Near, whether the CPUs and
	// memory all lie on them. Notes say what was left out and why.
	Devices []planDevice `json:"devices,omitempty"`
	Near    []int        `json:"near,omitempty"`
	Aligned *bool        `json:"aligned,omitempty"`
	Notes   []string     `json:"notes,omitempty"`
}

// planMemory is a request's memory in bytes, named as a pod names it.
type planMemory struct {
	Bytes        uint64 `json:"bytes,omitempty"`
	HugePages2Mi uint64 `json:"hugepages-2Mi,omitempty"`
	HugePages1Gi uint64 `json:"hugepages-1Gi,omitempty"`
}

func newPlanCmd() *cobra.Command {
	var o planOptions
	cmd := &cobra.Command{
		Use:   "plan (--sysfs-root DIR | --topology FILE) --cpus N [flags]",
		Short: "Show which CPUs and memory nodes the allocator would give a request",
		Long: `Run the CPU allocator once, without changing anything: given a machine (read
from sysfs, /sys by default, or from a file written by "locus topology -o json")
and what is already taken, print the CPU set a request would receive, the
NUMA nodes it spans and the nodes its cpuset.mems names. --memory and
--hugepages-2Mi/--hugepages-1Gi ask for memory on those nodes: each node
offers its MemTotal and its reserved huge pages, less what the --*-held
flags say pinned workloads hold there. --holding names the workloads
holding CPUs (taken, as --allocated); with --allow-moves, those named by
--movable may move, and the cheapest moves that give the request one node
(or as few as on an empty machine) and whole cores are printed first, one
line per move. --near-device places the CPUs next to a PCI device of the
machine (on its NUMA node when they fit) and says whether they are.
docs/allocator.md defines the policies and the moves.

An impossible request exits with status 2 and says why.`,
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.OutOrStdout()) },
	}
	f := cmd.Flags()
	f.StringVar(&o.sysfsRoot, "sysfs-root", "", "read the machine from this sysfs tree (default /sys)")
	f.StringVar(&o.topologyFile, "topology", "", "read the machine from this JSON file instead of sysfs")
	f.IntVar(&o.cpus, "cpus", 0, "CPUs to allocate (the pod's integer limits.cpu); required")
	f.StringVar(&o.policy, "policy", "",
		"full-pcpus, full-pcpus-then-threads, spread-by-pcpus, distribute-across-numa or static-burst (default: whole cores, then threads; see docs/allocator.md)")
	f.StringVar(&o.strategy, "numa-strategy", string(cpualloc.MostAllocated), "most-allocated or least-allocated")
	f.StringVar(&o.allocated, "allocated", "", "CPUs already owned exclusively, in Linux list format")
	f.StringVar(&o.reserved, "reserved", "", "CPUs reserved for the system, in Linux list format")
	f.StringVar(&o.burstLoad, "burst-load", "", "static-burst load already on CPUs, as CPU=MILLI pairs (\"3=500,4=250\")")
	f.Int64Var(&o.requestMilli, "request-milli", 0, "static-burst: the pod's CPU request in millicores (0: equal to --cpus)")
	f.BoolVar(&o.useReserved, "use-reserved", false, "allow reserved and isolated CPUs")
	m := &o.memory
	f.StringVar(&m.memory, "memory", "", "memory the workload needs on its cpuset.mems nodes (the pod's memory request: 512Mi, 8Gi)")
	f.StringVar(&m.hugePages2Mi, "hugepages-2Mi", "", "2 MiB huge pages it needs, in bytes (the pod's hugepages-2Mi request: 1Gi)")
	f.StringVar(&m.hugePages1Gi, "hugepages-1Gi", "", "1 GiB huge pages it needs, in bytes (the pod's hugepages-1Gi request: 4Gi)")
	f.StringVar(&m.heldMemory, "memory-held", "", "memory pinned workloads already hold, as NODE=QUANTITY pairs (\"0=48Gi,1=2Gi\")")
	f.StringVar(&m.held2Mi, "hugepages-2Mi-held", "", "2 MiB huge pages pinned workloads already hold, in bytes, as NODE=QUANTITY pairs")
	f.StringVar(&m.held1Gi, "hugepages-1Gi-held", "", "1 GiB huge pages pinned workloads already hold, in bytes, as NODE=QUANTITY pairs")
	addMoveFlags(f, &o.moves)
	f.StringArrayVar(&o.nearDevices, "near-device", nil,
		"place the CPUs next to this PCI device (0000:3b:00.0; repeatable): on its NUMA node when they fit, else the nearest")
	outputFlag(cmd, &o.output)
	return cmd
}

func (o planOptions) run(w io.Writer) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if o.cpus <= 0 {
		return usagef("--cpus must be at least 1, got %d", o.cpus)
	}
	if o.cpus > maxMachineCPUs {
		return usagef("--cpus %d: more than %d CPUs, which no machine has", o.cpus, maxMachineCPUs)
	}
	if err := o.checkRequestMilli(); err != nil {
		return err
	}
	mem, err := o.memory.request()
	if err != nil {
		return err
	}
	t, err := o.loadTopology()
	if err != nil {
		return err
	}
	st, reserved, err := o.state(t)
	if err != nil {
		return err
	}
	if st.Free, err = o.memory.free(t); err != nil {
		return err
	}
	near, err := nearDevices(t, o.nearDevices)
	if err != nil {
		return err
	}
	req := cpualloc.Request{CPUs: o.cpus, Policy: cpualloc.Policy(o.policy), Memory: mem, Near: near.nodes,
		NUMAStrategy: cpualloc.NUMAStrategy(o.strategy), RequestMilli: o.requestMilli, UseReserved: o.useReserved}
	holdings, err := o.moves.parse(t, st.Exclusive.CPUSet())
	if err != nil {
		return err
	}
	res, moves, err := o.moves.place(t, st, reserved, req, holdings)
	if err != nil {
		if errors.Is(err, cpualloc.ErrInsufficient) || errors.Is(err, cpualloc.ErrInvalidRequest) {
			return usageError{err}
		}
		return err
	}
	out := planJSON{CPUSet: res.CPUs.String(), NUMANodes: res.NUMANodes, CPUs: res.CPUs.Size(),
		Policy:       string(res.Policy),
		NUMAStrategy: cmp.Or(o.strategy, string(cpualloc.MostAllocated)),
		MemNodes:     res.MemNodes, MemorySpilled: !slices.Equal(res.MemNodes, res.NUMANodes),
		Devices: near.devices, Near: near.nodes, Notes: near.notes}
	if len(near.nodes) > 0 {
		aligned := !res.Unaligned
		out.Aligned = &aligned
	}
	if mem != (cpualloc.Memory{}) {
		out.Memory = &planMemory{mem.Bytes, mem.HugePages2Mi, mem.HugePages1Gi}
	}
	if req.Policy == cpualloc.StaticBurst {
		milli := o.requestMilli
		if milli == 0 {
			milli = int64(o.cpus) * 1000
		}
		out.BurstShareMilli = cpualloc.BurstShare(milli, o.cpus)
	}
	if o.moves.allowMoves {
		out.Moves = &moves
	}
	if o.output == "json" {
		return writeJSON(w, out)
	}
	if out.Moves != nil {
		if err := writeMoves(w, moves); err != nil {
			return err
		}
	}
	return writePlanTable(w, out)
}

// loadTopology reads the machine from exactly one source. Unreadable sources
// are failures of the environment (exit 1), not of the flags; a file that is
// not a topology is the caller's (exit 2).
func (o planOptions) loadTopology() (*topology.Topology, error) {
	switch {
	case o.sysfsRoot != "" && o.topologyFile != "":
		return nil, usagef("--sysfs-root and --topology are exclusive: give one")
	case o.topologyFile != "":
		return loadTopologyFile("--topology", o.topologyFile)
	case o.sysfsRoot != "":
		return topology.Discover(o.sysfsRoot)
	default:
		return topology.Discover("/sys")
	}
}

// checkRequestMilli names the flag where the allocator would name its
// request field.
func (o planOptions) checkRequestMilli() error {
	switch {
	case o.requestMilli < 0:
		return usagef("--request-milli %d is negative", o.requestMilli)
	case o.requestMilli > 0 && o.policy != string(cpualloc.StaticBurst):
		return usagef("--request-milli is for --policy %s only", cpualloc.StaticBurst)
	case o.requestMilli > int64(o.cpus)*1000:
		return usagef("--request-milli %d is over --cpus %d (%d millicores): a pod's request cannot exceed its limit",
			o.requestMilli, o.cpus, int64(o.cpus)*1000)
	}
	return nil
}

// state turns --allocated, --burst-load and --reserved into the allocator's
// inputs. Every CPU they name must be an online CPU of the machine: a typo
// would otherwise silently plan on a machine that is emptier than meant.
func (o planOptions) state(t *topology.Topology) (cpualloc.State, cpuset.CPUSet, error) {
	online := t.CPUSet()
	lists := map[string]cpuset.CPUSet{}
	for _, f := range []struct{ name, value string }{{"allocated", o.allocated}, {"reserved", o.reserved}} {
		set, err := topology.ParseCPUList(f.value)
		if err != nil {
			return cpualloc.State{}, set, usagef("--%s: %v", f.name, err)
		}
		if extra := set.Difference(online); !extra.IsEmpty() {
			return cpualloc.State{}, set, usagef("--%s: CPUs %s are not online CPUs of this machine (%s)", f.name, extra, online)
		}
		lists[f.name] = set
	}
	load, err := parseBurstLoad(o.burstLoad, online)
	if err != nil {
		return cpualloc.State{}, cpuset.New(), err
	}
	return cpualloc.State{Exclusive: cpualloc.BitsOf(lists["allocated"]), BurstMilli: load}, lists["reserved"], nil
}

// parseBurstLoad reads "CPU=MILLI,..." pairs.
func parseBurstLoad(s string, online cpuset.CPUSet) (map[int]int64, error) {
	load := map[int]int64{}
	if strings.TrimSpace(s) == "" {
		return load, nil
	}
	for _, pair := range strings.Split(s, ",") {
		cpu, milli, ok := strings.Cut(strings.TrimSpace(pair), "=")
		id, err1 := strconv.Atoi(cpu)
		m, err2 := strconv.ParseInt(milli, 10, 64)
		switch {
		case !ok || err1 != nil || err2 != nil:
			return nil, usagef("--burst-load: %q is not CPU=MILLI", pair)
		case !online.Contains(id):
			return nil, usagef("--burst-load: cpu %d is not an online CPU of this machine", id)
		case m < 0 || m > 1000:
			return nil, usagef("--burst-load: cpu %d: %d millicores is outside 0-1000", id, m)
		}
		load[id] += m
	}
	return load, nil
}

func writePlanTable(w io.Writer, p planJSON) error {
	mems := joinIDs(p.MemNodes)
	if p.MemorySpilled {
		mems += " (the memory spilled beyond the CPUs' nodes)"
	}
	_, err := fmt.Fprintf(w, "cpuset:      %s (%d CPUs)\nnuma nodes:  %s\nmems:        %s\npolicy:      %s, %s\n",
		p.CPUSet, p.CPUs, joinIDs(p.NUMANodes), mems, p.Policy, p.NUMAStrategy)
	if err == nil && p.Memory != nil {
		_, err = fmt.Fprintf(w, "memory:      %s\n", memoryRequestText(*p.Memory))
	}
	if err == nil && p.BurstShareMilli > 0 {
		_, err = fmt.Fprintf(w, "burst share: %d millicores on each CPU\n", p.BurstShareMilli)
	}
	if err == nil {
		err = writePlanNear(w, p)
	}
	return err
}

func joinIDs(ids []int) string {
	s := make([]string, len(ids))
	for i, n := range ids {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// memoryRequestText names each kind the request asks for:
// "8.0 GiB, 2 MiB huge pages 1.0 GiB".
func memoryRequestText(m planMemory) string {
	var parts []string
	for _, k := range []struct {
		name  string
		bytes uint64
	}{{"", m.Bytes}, {"2 MiB huge pages ", m.HugePages2Mi}, {"1 GiB huge pages ", m.HugePages1Gi}} {
		if k.bytes > 0 {
			parts = append(parts, k.name+topology.HumanBytes(k.bytes))
		}
	}
	return strings.Join(parts, ", ")
}
