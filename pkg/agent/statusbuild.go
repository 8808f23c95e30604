package agent

import (
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/agent/plan"
	"github.com/locus-project/locus/pkg/agent/state"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/memqos"
)

// buildStatus describes the node after a reconcile, reading memory QoS
// files back so it shows what is in force, not what was meant.
func (a *Agent) buildStatus(cfg *config, rs []resolved, d plan.Desired, ck state.Checkpoint) Status {
	st := Status{Time: a.now().UTC(), Config: a.configName(), ConfigError: a.cfg.lastErr}
	st.Node = NodeStatus{
		CgroupVersion: a.h.Version().String(),
		Topology:      topologySummary(a.topo),
		CPUs:          a.topo.CPUSet().String(),
		Reserved:      cfg.reserved.String(),
		Exclusive:     d.Pools.Exclusive.String(),
		Shared:        d.Pools.Shared.String(),
		BE:            d.Pools.BE.String(),
		Unsupported:   append([]string(nil), a.unsupportedKnobs...),
	}
	for _, p := range d.Problems {
		if p.Workload == "" {
			st.Node.Problems = append(st.Node.Problems, p.String())
		}
	}
	states := map[string]plan.WorkloadState{}
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
			Problems: problems[name], PIDs: []int{}}
		if s, ok := states[name]; ok {
			ws.Pool, ws.CPUs, ws.Mems, ws.NUMANodes = s.Pool, s.CPUs, s.Mems, s.NUMANodes
			ws.MemoryQOS = MemQoSStatus{Enabled: s.MemQoSOn, Reason: s.MemQoSWhy}
		}
		if a.cgroupExists(r.cgroup) {
			ws.MemoryQOS.Values = a.readMemQoS(r.cgroup)
			if pids, err := a.h.Procs(r.cgroup); err == nil && pids != nil {
				ws.PIDs = pids
			}
		}
		if r.source == FromCommand {
			ws.Process = &ProcessState{State: "not started", Restarts: a.sup.restarts(name)}
			if p := ck.Workloads[name].Started; p != nil && a.procAlive(p) {
				ws.Process.PID, ws.Process.StartTime, ws.Process.State = p.PID, p.StartTime, "running"
			} else if a.sup.waitFor(name, a.now()) > 0 {
				ws.Process.State = "restarting"
			}
		}
		st.Workloads = append(st.Workloads, ws)
	}
	return st
}

// readMemQoS reads every memory QoS file the cgroup has.
func (a *Agent) readMemQoS(rel string) map[string]string {
	out := map[string]string{}
	for _, k := range memqos.Knobs {
		if k.Knob == memqos.MemorySoftLimit && !a.opts.V1SoftLimitForLow {
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

// cpuCount is the number of CPUs in a Linux CPU list, 0 if it does not parse.
func cpuCount(list string) int {
	s, err := cpuset.Parse(list)
	if err != nil {
		return 0
	}
	return s.Size()
}
