package agent

import (
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/hostsource"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/workload"
)

const (
	FromCgroup  status.Source = hostsource.Cgroup
	FromCommand status.Source = hostsource.Command
	FromMatch   status.Source = hostsource.Match
)

// resolved is one configured workload with everything derived from its spec.
type resolved struct {
	spec     hostconfig.Workload
	source   status.Source
	cgroup   string
	class    string // upper-case QoS class, "" when none
	plan     workload.Workload
	problems []workload.Problem
}

// resolveWorkloads turns the config's workloads, in the cgroups cgroupOf finds, into the plan's view.
func resolveWorkloads(cfg *hostconfig.HostConfig, cgroupOf func(*hostconfig.HostConfig, hostconfig.Workload) (string, []string)) []resolved {
	out := make([]resolved, 0, len(cfg.Workloads))
	for _, w := range cfg.Workloads {
		cg, below := cgroupOf(cfg, w)
		st := workload.FromHostConfig(w, cg)
		st.Plan.SetBelow(below) // cgroups someone else made below it, given its cpuset
		out = append(out, resolved{spec: w, source: status.Source(hostsource.KindOf(w)), cgroup: cg, class: st.Class, plan: st.Plan, problems: st.Problems})
	}
	return out
}

// plans are the workloads of rs, as the decision and the executor take them.
func plans(rs []resolved) []workload.Workload {
	ws := make([]workload.Workload, len(rs))
	for i := range rs {
		ws[i] = rs[i].plan
	}
	return ws
}
