package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/boundedread"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology"
)

// localityTarget is what `locus numastat` and `locus migrate` act on: one
// process, a cgroup or an agent workload, and where to read them from.
type localityTarget struct {
	pid                           int
	cgroup, workload              string
	procRoot, sysfsRoot, stateDir string
	cgroupRoot, cgroupVersion     string
	byName                        // numastat's --libvirt-domain and --comm
}

func (o *localityTarget) flags(cmd *cobra.Command, pidFlag string, pidShort string) {
	f := cmd.Flags()
	f.IntVarP(&o.pid, pidFlag, pidShort, 0, "the process")
	f.StringVar(&o.cgroup, "cgroup", "", "a cgroup, relative to --cgroup-root (all its processes)")
	f.StringVar(&o.workload, "workload", "", "a workload of the agent, by name (from <state-dir>/status.json)")
	f.StringVar(&o.procRoot, "proc-root", "/proc", "where procfs is mounted")
	f.StringVar(&o.sysfsRoot, "sysfs-root", "/sys", "where sysfs is mounted")
	f.StringVar(&o.stateDir, "state-dir", agent.DefaultStateDir, "the agent's state directory")
	f.StringVar(&o.cgroupRoot, "cgroup-root", cgroup.DefaultRoot, "where cgroups are mounted")
	f.StringVar(&o.cgroupVersion, "cgroup-version", "auto", "auto, v1 or v2")
}

// resolvedTarget is a target's processes and local NUMA nodes.
type resolvedTarget struct {
	Label string `json:"target"`
	PIDs  []int  `json:"pids"`
	CPUs  string `json:"cpus"`
	Local []int  `json:"localNodes"`
	topo  *topology.Topology
}

func (o localityTarget) resolve(pidFlag string) (resolvedTarget, error) {
	n := 0
	for _, set := range []bool{o.pid != 0, o.cgroup != "", o.workload != ""} {
		if set {
			n++
		}
	}
	if n+o.given() != 1 && o.also != "" {
		return resolvedTarget{}, usagef("give exactly one of --%s, --cgroup, --workload, %s", pidFlag, o.also)
	}
	if n+o.given() != 1 {
		return resolvedTarget{}, usagef("give exactly one of --%s, --cgroup or --workload", pidFlag)
	}
	if o.pid < 0 {
		return resolvedTarget{}, usagef("--%s %d is not a process id", pidFlag, o.pid)
	}
	topo, err := topology.Discover(o.sysfsRoot)
	if err != nil {
		return resolvedTarget{}, err
	}
	t := resolvedTarget{topo: topo}
	reader := locality.Reader{ProcRoot: o.procRoot}
	var cpus cpuset.CPUSet
	switch {
	case o.pid != 0:
		comm, _ := boundedread.File(fmt.Sprintf("%s/%d/comm", o.procRoot, o.pid), 4<<10)
		t.Label = fmt.Sprintf("pid %d (%s)", o.pid, strings.TrimSpace(string(comm)))
		t.PIDs = []int{o.pid}
		if cpus, err = reader.CPUsAllowed(o.pid); err != nil {
			return t, err
		}
	case o.cgroup != "" || o.given() != 0:
		if t.Label, t.PIDs, err = o.pidsOf(); err != nil {
			return t, err
		}
		if cpus, err = unionCPUsAllowed(reader, t.PIDs); err != nil {
			return t, fmt.Errorf("%s: %w", t.Label, err)
		}
	default:
		w, err := o.findWorkload()
		if err != nil {
			return t, err
		}
		t.Label = "workload " + w.Name
		if t.PIDs, err = o.cgroupPIDs(w.Cgroup); err != nil {
			return t, err
		}
		if cpus, err = topology.ParseCPUList(w.CPUs); err != nil {
			return t, fmt.Errorf("workload %s in %s: cpus: %w", w.Name, status.File, err)
		}
		t.Local = slices.Clone(w.NUMANodes)
	}
	t.CPUs = cpus.String()
	if len(t.Local) == 0 {
		t.Local = topo.NodesOf(cpus)
	}
	if len(t.Local) == 0 {
		return t, fmt.Errorf("%s: its CPUs %q are on no known NUMA node", t.Label, t.CPUs)
	}
	return t, nil
}

func (o localityTarget) cgroupPIDs(rel string) ([]int, error) {
	v, err := cgroup.ParseVersion(o.cgroupVersion)
	if err != nil {
		return nil, usagef("--cgroup-version: %v", err)
	}
	h, err := cgroup.Open(o.cgroupRoot, v)
	if err != nil {
		return nil, err
	}
	return h.Procs(rel) // processes, not threads: threads share their memory
}

func (o localityTarget) findWorkload() (status.WorkloadStatus, error) {
	st, err := status.Read(o.stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return status.WorkloadStatus{}, fmt.Errorf("no %s in %s: --workload needs a running `locus agent` (or pass --state-dir)", status.File, o.stateDir)
	}
	if err != nil {
		return status.WorkloadStatus{}, err
	}
	var names []string
	for _, w := range st.Workloads {
		if w.Name == o.workload {
			return w, nil
		}
		names = append(names, w.Name)
	}
	return status.WorkloadStatus{}, fmt.Errorf("no workload %q in %s/%s (workloads: %s)", o.workload, o.stateDir, status.File, strings.Join(names, ", "))
}

// unionCPUsAllowed is the CPUs any of the processes may run on; processes
// that exited meanwhile are left out.
func unionCPUsAllowed(r locality.Reader, pids []int) (cpuset.CPUSet, error) {
	all := cpuset.New()
	for _, pid := range pids {
		c, err := r.CPUsAllowed(pid)
		if errors.Is(err, locality.ErrNoProcess) {
			continue
		}
		if err != nil {
			return all, err
		}
		all = all.Union(c)
	}
	if all.IsEmpty() {
		return all, fmt.Errorf("no running process")
	}
	return all, nil
}

func newNumastatCmd() *cobra.Command {
	var o localityTarget
	var output string
	cmd := &cobra.Command{
		Use:   "numastat (-p PID | --cgroup PATH | --workload NAME | --libvirt-domain NAME | --comm NAME) [-o table|json]",
		Short: "Show on which NUMA nodes a process, cgroup or workload has its memory",
		Long: `Show memory per NUMA node in MB, as "numastat -p" does (Huge, Heap, Stack,
Private and Total rows), and the local ratio: the share of pages on the local
nodes, which are the nodes of the CPUs the target may run on (a process's
Cpus_allowed_list, or the workload's cpuset). A cgroup or workload counts each
process once, however many threads it has; a libvirt domain is its scope and
the cgroups of its threads, a command name every process of that name, summed
as "numastat -p qemu-kvm" does.`,
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			t, err := o.resolve("pid")
			if err != nil {
				return err
			}
			mems, _, err := locality.Reader{ProcRoot: o.procRoot}.Processes(t.PIDs)
			if err != nil {
				return err
			}
			rep := numastatReport(t, mems)
			if output == "json" {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			return renderNumastat(cmd.OutOrStdout(), rep)
		},
	}
	o.flags(cmd, "pid", "p")
	o.byName.flags(cmd)
	o.also = "--libvirt-domain or --comm"
	outputFlag(cmd, &output)
	return cmd
}

// numastatJSON is the -o json form.
type numastatJSON struct {
	resolvedTarget
	Nodes       []int                         `json:"nodes"`
	MB          map[string]map[string]float64 `json:"mb"` // row -> node ("0", "1", "total") -> MB
	LocalRatio  int                           `json:"localRatio"`
	RemotePages uint64                        `json:"remotePages"`
	Processes   int                           `json:"processes"` // thread groups measured
	PageSize    int                           `json:"pageSize"`
}

var numastatRows = []string{"Huge", "Heap", "Stack", "Private", "Total"}

func numastatReport(t resolvedTarget, mems []locality.ProcessMemory) numastatJSON {
	b := locality.BreakdownOf(mems)
	total := b.Total()
	nodes := make([]int, 0, len(t.topo.Nodes))
	for _, n := range t.topo.Nodes {
		nodes = append(nodes, n.ID)
	}
	for _, id := range total.Nodes() {
		if !slices.Contains(nodes, id) {
			nodes = append(nodes, id)
		}
	}
	slices.Sort(nodes)
	page := os.Getpagesize()
	mb := func(pages uint64) float64 { return float64(pages) * float64(page) / (1 << 20) }
	rep := numastatJSON{resolvedTarget: t, Nodes: nodes, MB: map[string]map[string]float64{},
		LocalRatio: locality.LocalRatio(total, t.Local), RemotePages: total.Remote(t.Local), PageSize: page,
		Processes: len(mems)}
	for i, row := range []locality.NodePages{b.Huge, b.Heap, b.Stack, b.Private, total} {
		cells := map[string]float64{"total": mb(row.Total())}
		for _, id := range nodes {
			cells[strconv.Itoa(id)] = mb(row[id])
		}
		rep.MB[numastatRows[i]] = cells
	}
	return rep
}

func renderNumastat(w io.Writer, rep numastatJSON) error {
	fmt.Fprintf(w, "Per-node memory usage (in MBs) for %s\n", rep.Label)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := []string{""}
	for _, id := range rep.Nodes {
		header = append(header, fmt.Sprintf("Node %d", id))
	}
	header = append(header, "Total")
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, row := range numastatRows {
		cells := []string{row}
		for _, id := range rep.Nodes {
			cells = append(cells, fmt.Sprintf("%.2f", rep.MB[row][strconv.Itoa(id)]))
		}
		cells = append(cells, fmt.Sprintf("%.2f", rep.MB[row]["total"]))
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "local nodes %s (cpus %s): local ratio %d%%, %d remote pages, %d process(es)\n",
		locality.FormatNodeList(rep.Local), rep.CPUs, rep.LocalRatio, rep.RemotePages, rep.Processes)
	return err
}
