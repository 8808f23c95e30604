// Package publish turns what a reconcile decided into what the agent
// publishes: the status (status.json and /status), with the cgroup files
// read back so it shows what is in force, and the Prometheus series. It
// reads the decision and, through a Reader, the cgroups; the only file it
// writes is status.json, through pkg/status.
package publish

import (
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/coresched"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// Reader reads cgroups back, as *cgroup.Hierarchy does; the agent's answers
// the files a reconcile read or wrote from what it knows they hold, and a
// knob whose file the cgroup lacks with an error.
type Reader interface {
	Version() cgroup.Version
	// Exists: the cgroup is there (in the hierarchy that holds cpusets, v1).
	Exists(rel string) bool
	ReadKnob(rel string, k cgroup.Knob) (string, error)
	Procs(rel string) ([]int, error)
}

// Workload is one workload as the status lists it.
type Workload struct {
	Name     string
	Source   status.Source
	Cgroup   string
	QOSClass string
	Process  *status.ProcessState   // a command's process; nil for the others
	Locality *status.LocalityStatus // its last memory locality run, if kept
	Devices  []string               // the PCI devices it holds

	// LibvirtDomain is the libvirt domain a HostConfig workload names.
	LibvirtDomain string
}

// Input is what a status is built from: a reconcile's decision, its
// workloads, and the node as the agent knows it.
type Input struct {
	Time        time.Time
	Config      string // the config's name
	ConfigError string
	Topology    *topology.Topology
	Decided     decide.Desired
	Problems    []workload.Problem // the reconcile's problems, as reported
	Workloads   []Workload         // in the status's order
	// Ready marks the cgroups the reconcile prepared; the others are read
	// back only if they exist.
	Ready       map[string]bool
	Cgroups     Reader
	Unsupported []string           // cgroup files the kernel lacks
	HostChecks  []status.HostCheck // as run at start
	Kubelet     *kubelet.Summary   // nil when the kubelet's files are not read
	Pinning     *status.Pinning
	Devices     *status.Devices
	// CPUIdle: cgroups have cpu.idle; Core: whether the kernel has core
	// scheduling; Isolated: the workloads whose processes have a cookie.
	CPUIdle  bool
	CPUBurst bool // cgroups have cpu.cfs_burst_us
	Core     coresched.Support
	Isolated func(workload string) bool
	// V1SoftLimitForLow: memory.soft_limit_in_bytes is read back too.
	V1SoftLimitForLow bool
}

// Build describes the node after a reconcile, with the memory and CPU QoS
// files as read back, so it shows what is in force, not what was meant.
func Build(in Input) status.Status {
	d := in.Decided
	st := status.Status{Time: in.Time, Config: in.Config, ConfigError: in.ConfigError}
	st.Node = status.NodeStatus{
		CgroupVersion: in.Cgroups.Version().String(),
		Topology:      status.TopologySummary(in.Topology),
		CPUs:          in.Topology.CPUSet().String(),
		Reserved:      d.Pools.Reserved.String(),
		Exclusive:     d.Pools.Exclusive.String(),
		Shared:        d.Pools.Shared.String(),
		BE:            d.Pools.BE.String(),
		Unsupported:   append([]string(nil), in.Unsupported...),
		HostChecks:    in.HostChecks,
		KubeletCPUs:   d.Pools.Kubelet.String(),
		CPUQoS:        cpuQoSLines(in.CPUIdle, in.CPUBurst, in.Core),
		Pinning:       in.Pinning,
		Devices:       in.Devices,
		Kubelet:       in.Kubelet,
	}
	for _, p := range d.Problems {
		if p.Workload == "" {
			st.Node.Problems = append(st.Node.Problems, p.String())
		}
	}
	// By pointer: a workload's state is a large value, and a map of copies
	// was 1.5 % of the agent's bytes under a 300-pod churn.
	states := make(map[string]*decide.WorkloadState, len(d.Workloads))
	for i := range d.Workloads {
		states[d.Workloads[i].Name] = &d.Workloads[i]
	}
	problems := map[string][]string{}
	for _, p := range in.Problems {
		problems[p.Workload] = append(problems[p.Workload], p.Reason+": "+p.Message)
	}
	if len(in.Workloads) > 0 { // none stays nil: status.json says null, as it always has
		st.Workloads = make([]status.WorkloadStatus, 0, len(in.Workloads))
	}
	for _, w := range in.Workloads {
		ws := status.WorkloadStatus{Name: w.Name, Source: w.Source, Cgroup: w.Cgroup, QOSClass: w.QOSClass,
			Problems: problems[w.Name], PIDs: []int{}, MemoryLocality: w.Locality, Process: w.Process, LibvirtDomain: w.LibvirtDomain, Devices: w.Devices}
		if s, ok := states[w.Name]; ok {
			ws.Pool, ws.CPUs, ws.Mems, ws.NUMANodes = s.Pool, s.CPUs, s.Mems, s.NUMANodes
			ws.MemoryQOS = status.MemQoSStatus{Enabled: s.MemQoSOn, Reason: s.MemQoSWhy}
			ws.CPUQOS = cpuQoSStatus(*s, in.Core, in.Isolated != nil && in.Isolated(s.Name))
			ws.MemoryByNode = memoryByNode(s.MemoryByNode)
			ws.ContainerCPUs = s.ContainerCPUs
		}
		st.Workloads = append(st.Workloads, ws)
	}
	// The read-back is a few files per workload, read by a few goroutines.
	r := in.Cgroups
	forEach(len(in.Workloads), func(i int) {
		if ws := &st.Workloads[i]; in.Ready[ws.Cgroup] || r.Exists(ws.Cgroup) {
			ws.MemoryQOS.Values = readMemQoS(r, ws.Cgroup, in.V1SoftLimitForLow)
			ws.CPUQOS.Values = readCPUQoS(r, ws.Cgroup)
			if pids, err := r.Procs(ws.Cgroup); err == nil && pids != nil {
				ws.PIDs = pids
			}
		}
	})
	return st
}

// forEach runs f(0) … f(n-1) on a few goroutines and waits for them.
func forEach(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, 4, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// readMemQoS gives every memory QoS file the cgroup has.
func readMemQoS(r Reader, rel string, softLimit bool) map[string]string {
	out := map[string]string{}
	for _, k := range memqos.Knobs {
		if k.Knob == memqos.MemorySoftLimit && !softLimit {
			continue
		}
		if v, err := r.ReadKnob(rel, cgroup.Knob(k.Knob)); err == nil {
			out[string(k.Knob)] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// cpuCount is the number of CPUs in a canonical Linux CPU list (as the
// status spells it), 0 if it does not parse. It counts ranges instead of
// building a set: it runs for every workload whenever the status changes.
func cpuCount(list string) int {
	if list == "" {
		return 0
	}
	n := 0
	for r := range strings.SplitSeq(list, ",") {
		a, b, isRange := strings.Cut(r, "-")
		lo, err := strconv.Atoi(a)
		hi := lo
		if err == nil && isRange {
			hi, err = strconv.Atoi(b)
		}
		if err != nil || hi < lo {
			return 0
		}
		n += hi - lo + 1
	}
	return n
}

// memoryByNode lists what a workload holds on each node, in node order,
// leaving out the nodes it holds nothing on.
func memoryByNode(held map[int]cpualloc.Memory) []status.NodeMemory {
	var out []status.NodeMemory
	for _, id := range slices.Sorted(maps.Keys(held)) {
		if m := held[id]; !m.IsZero() {
			out = append(out, status.NodeMemory{Node: id, Bytes: m.Bytes, HugePages2Mi: m.HugePages2Mi, HugePages1Gi: m.HugePages1Gi})
		}
	}
	return out
}
