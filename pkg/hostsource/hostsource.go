// Package hostsource is the standalone workload source: the HostConfig file
// (or the built-in config), acted on once a change has settled, and the
// processes of its workloads: the cgroups it creates, the commands it starts
// and re-adopts, the running processes its match rules adopt.
//
// It is not a pkg/source.Source: a Source hands over pods whose processes
// someone else puts in place, while a HostConfig workload carries what the
// agent must do for it (a command to run, processes to adopt) and a config
// the agent keeps across bad edits.
package hostsource

import (
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/workload"
)

// How a HostConfig workload's processes come to its cgroup: shown as the
// workload's source in the status.
const (
	Cgroup  = "cgroup"  // someone else's cgroup, written only
	Command = "command" // the agent starts the command in a cgroup it creates
	Match   = "match"   // the agent moves matching processes into a cgroup it creates
)

// KindOf says how the workload's processes come to its cgroup: Cgroup,
// Command, Match or Libvirt.
func KindOf(w hostconfig.Workload) string {
	switch {
	case w.Cgroup != "":
		return Cgroup
	case len(w.Command) > 0:
		return Command
	case w.Match != nil && w.Match.LibvirtDomain != "":
		return Libvirt
	}
	return Match
}

// StopOnExit splits the workloads for the agent's way out: those marked
// stop-on-agent-exit (the built-in demo ones), by name, which it stops and
// removes, and the cgroups of the others, which keep running as they are.
// No HostConfig (nil) has neither.
func StopOnExit(cfg *hostconfig.HostConfig) (stop []string, keep map[string]bool) {
	keep = map[string]bool{}
	if cfg == nil {
		return nil, keep
	}
	for _, w := range cfg.Workloads {
		if workload.StopOnExit(w.Annotations) {
			stop = append(stop, w.Name)
		} else {
			keep[cfg.CgroupPath(w)] = true
		}
	}
	return stop, keep
}
