package agent

import (
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/workload"
)

const (
	FromCgroup  Source = "cgroup"
	FromCommand Source = "command"
	FromMatch   Source = "match"
)

// resolved is one configured workload with everything derived from its spec.
type resolved struct {
	spec     hostconfig.Workload
	source   Source
	cgroup   string
	class    string // upper-case QoS class, "" when none
	plan     workload.Workload
	problems []workload.Problem
}

func sourceOf(w hostconfig.Workload) Source {
	switch {
	case w.Cgroup != "":
		return FromCgroup
	case len(w.Command) > 0:
		return FromCommand
	}
	return FromMatch
}

// resolveWorkloads turns the config's workloads into the plan's view. It is
// pure; pkg/workload reads each workload's text.
func resolveWorkloads(cfg *hostconfig.HostConfig) []resolved {
	out := make([]resolved, 0, len(cfg.Workloads))
	for _, w := range cfg.Workloads {
		cg := cfg.CgroupPath(w)
		st := workload.FromHostConfig(w, cg)
		out = append(out, resolved{spec: w, source: sourceOf(w), cgroup: cg, class: st.Class, plan: st.Plan, problems: st.Problems})
	}
	return out
}
