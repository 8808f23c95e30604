package agent

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/execute"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

// buildStatus describes the node after a reconcile, with the memory QoS
// files as read back, so it shows what is in force, not what was meant.
// Files the reconcile read or wrote are taken from seen; the others are read.
func (a *Agent) buildStatus(cfg *workload.Config, rs []resolved, d decide.Desired, ck state.Checkpoint,
	ready map[string]bool, seen execute.ReadBack) Status {
	st := Status{Time: a.now().UTC(), Config: a.configName(), ConfigError: a.cfg.lastErr}
	st.Node = NodeStatus{
		CgroupVersion: a.h.Version().String(),
		Topology:      status.TopologySummary(a.topo),
		CPUs:          a.topo.CPUSet().String(),
		Reserved:      d.Pools.Reserved.String(),
		Exclusive:     d.Pools.Exclusive.String(),
		Shared:        d.Pools.Shared.String(),
		BE:            d.Pools.BE.String(),
		Unsupported:   a.exec.Unsupported(),
		HostChecks:    a.hostChecks,
		KubeletCPUs:   d.Pools.Kubelet.String(),
		CPUQoS:        a.cpuQoSLines(),
		Pinning:       a.pinning(),
	}
	if a.opts.Kubelet.Dir != "" {
		sum := a.kube.state.Summary()
		st.Node.Kubelet = &sum
	}
	for _, p := range d.Problems {
		if p.Workload == "" {
			st.Node.Problems = append(st.Node.Problems, p.String())
		}
	}
	states := map[string]decide.WorkloadState{}
	for _, w := range d.Workloads {
		states[w.Name] = w
	}
	problems := map[string][]string{}
	for _, p := range a.lastProblemList {
		problems[p.Workload] = append(problems[p.Workload], p.Reason+": "+p.Message)
	}
	for _, r := range rs {
		name := r.spec.Name
		ws := WorkloadStatus{Name: name, Source: r.source, Cgroup: r.cgroup, QOSClass: r.class,
			Problems: problems[name], PIDs: []int{}, MemoryLocality: a.localityStatus(name)}
		if s, ok := states[name]; ok {
			ws.Pool, ws.CPUs, ws.Mems, ws.NUMANodes = s.Pool, s.CPUs, s.Mems, s.NUMANodes
			ws.MemoryQOS = MemQoSStatus{Enabled: s.MemQoSOn, Reason: s.MemQoSWhy}
			ws.CPUQOS = a.cpuQoSStatus(s)
		}
		if r.source == FromCommand {
			ws.Process = &ProcessState{State: "not started", Restarts: a.sup.Restarts(name)}
			if p := ck.Workloads[name].Started; p != nil && a.procAlive(p) {
				ws.Process.PID, ws.Process.StartTime, ws.Process.State = p.PID, p.StartTime, "running"
			} else if a.sup.WaitFor(name, a.now()) > 0 {
				ws.Process.State = "restarting"
			}
		}
		st.Workloads = append(st.Workloads, ws)
	}
	// The read-back is a few files per workload, read by a few goroutines.
	forEach(len(rs), func(i int) {
		if ws := &st.Workloads[i]; ready[ws.Cgroup] || a.cgroupExists(ws.Cgroup) {
			ws.MemoryQOS.Values = a.readMemQoS(ws.Cgroup, seen[ws.Cgroup])
			ws.CPUQOS.Values = a.readCPUQoS(ws.Cgroup, seen[ws.Cgroup])
			if pids, err := a.h.Procs(ws.Cgroup); err == nil && pids != nil {
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

// readMemQoS gives every memory QoS file the cgroup has, from seen or read.
func (a *Agent) readMemQoS(rel string, seen map[cgroup.Knob]execute.FileState) map[string]string {
	out := map[string]string{}
	for _, k := range memqos.Knobs {
		if k.Knob == memqos.MemorySoftLimit && !a.opts.V1SoftLimitForLow {
			continue
		}
		if f, ok := seen[cgroup.Knob(k.Knob)]; ok {
			if f.Present {
				out[string(k.Knob)] = f.Text
			}
			continue
		}
		if v, err := a.h.ReadKnob(rel, cgroup.Knob(k.Knob)); err == nil {
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
