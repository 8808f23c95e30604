package agent

import (
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/execute"
	"github.com/locus-project/locus/pkg/publish"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

// buildStatus describes the node after a reconcile (pkg/publish), with the
// files the reconcile read or wrote taken from seen and the others read.
func (a *Agent) buildStatus(rs []resolved, d decide.Desired, ck state.Checkpoint,
	ready map[string]bool, seen execute.ReadBack, problems []workload.Problem) status.Status {
	in := publish.Input{Time: a.now().UTC(), Config: a.configName(), ConfigError: a.cfg.lastErr,
		Topology: a.topo, Decided: d, Problems: problems, Ready: ready, Cgroups: a.exec.Reader(seen),
		Unsupported: a.exec.Unsupported(), HostChecks: a.hostChecks, Pinning: a.pinning(), Devices: a.src.Devices(),
		CPUIdle: a.cpuIdle, CPUBurst: a.burst.Kernel(), Core: a.exec.CoreSupport(), Isolated: a.exec.Isolated, V1SoftLimitForLow: a.opts.V1SoftLimitForLow}
	if a.opts.Kubelet.Dir != "" {
		st, _ := a.kube.State()
		sum := st.Summary()
		in.Kubelet = &sum
	}
	in.Workloads = make([]publish.Workload, 0, len(rs))
	for _, r := range rs {
		w := publish.Workload{Name: r.spec.Name, Source: r.source, Cgroup: r.cgroup, QOSClass: r.class,
			Locality: a.loc.Status(r.spec.Name), Devices: r.spec.Devices}
		if r.spec.Match != nil {
			w.LibvirtDomain = r.spec.Match.LibvirtDomain
		}
		if r.source == FromCommand {
			w.Process = a.processState(r.spec.Name, ck)
		}
		in.Workloads = append(in.Workloads, w)
	}
	return publish.Build(in)
}

// processState is a command's process, as the supervisor and the checkpoint
// know it.
func (a *Agent) processState(name string, ck state.Checkpoint) *status.ProcessState {
	ps := &status.ProcessState{State: "not started", Restarts: a.sup.Restarts(name)}
	if p := ck.Workloads[name].Started; p != nil && a.procAlive(p) {
		ps.PID, ps.StartTime, ps.State = p.PID, p.StartTime, "running"
	} else if a.sup.WaitFor(name, a.now()) > 0 {
		ps.State = "restarting"
	}
	return ps
}
