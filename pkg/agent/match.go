package agent

import (
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/hostconfig"
)

// matchProcesses moves running processes that a `match:` workload adopts
// into its cgroup. Only processes that match are touched; the agent's own
// processes and those of its command workloads never are.
func (a *Agent) matchProcesses(r *resolved) error {
	m := r.spec.Match
	pids, err := a.procs.PIDs()
	if err != nil {
		return err
	}
	inside := map[int]bool{}
	if cur, err := a.h.Procs(r.cgroup); err == nil {
		for _, p := range cur {
			inside[p] = true
		}
	}
	var exe os.FileInfo
	if m.Exe != "" {
		if exe, err = os.Stat(m.Exe); err != nil {
			return fmt.Errorf("match.exe: %w", err)
		}
	}
	var move []int
	for _, pid := range pids {
		if inside[pid] || pid == os.Getpid() || !a.adoptable(pid, *m, exe) || a.sup.Ours(pid) {
			continue
		}
		move = append(move, pid)
	}
	if len(move) == 0 || a.opts.DryRun {
		for _, p := range move {
			fmt.Fprintf(a.opts.Out, "move process %d to %s\n", p, r.cgroup)
		}
		return nil
	}
	rep, err := a.w.AddProcs(r.cgroup, move)
	if len(rep.Moved) > 0 {
		a.events.Emit(eventlog.Normal, "ProcessesMoved", r.spec.Name, "moved processes %v into cgroup %s", rep.Moved, r.cgroup)
	}
	return err
}

// adoptable says whether the match selects the process. Pid 1 and kernel
// threads never are: moving init or a kernel thread would break the host,
// whatever the config says. exe is the file m.Exe names, nil without one.
// Any read that fails (the process exited, or hides its files) is a no.
func (a *Agent) adoptable(pid int, m hostconfig.Match, exe os.FileInfo) bool {
	if pid <= 1 {
		return false
	}
	st, err := a.procs.Stat(pid)
	if err != nil || st.KernelThread() || !st.Running() {
		return false
	}
	argv, err := a.procs.Cmdline(pid)
	if err != nil || len(argv) == 0 {
		return false
	}
	if m.Cmdline != "" && !strings.Contains(strings.Join(argv, " "), m.Cmdline) {
		return false
	}
	if m.Comm != "" {
		comm, err := a.procs.Comm(pid)
		if ok, _ := path.Match(m.Comm, comm); err != nil || !ok {
			return false
		}
	}
	if m.UID != nil || m.GID != nil {
		o, err := a.procs.Owner(pid)
		if err != nil || (m.UID != nil && !allAre(o.UIDs, *m.UID)) || (m.GID != nil && !allAre(o.GIDs, *m.GID)) {
			return false
		}
	}
	if exe != nil {
		got, err := a.procs.ExeInfo(pid)
		if err != nil || !os.SameFile(got, exe) {
			return false
		}
	}
	if m.Unit != "" {
		cg, err := a.procs.SystemdCgroup(pid)
		if err != nil || !inSystemUnit(cg, m.Unit) {
			return false
		}
	}
	return true
}

func allAre(ids [4]int, want int) bool {
	for _, id := range ids {
		if id != want {
			return false
		}
	}
	return true
}

// inSystemUnit reports whether a systemd cgroup path lies in the unit. Below
// a user@UID.service the user's own manager names the units, so a unit
// there proves nothing about who started the process.
func inSystemUnit(cg, unit string) bool {
	for _, part := range strings.Split(strings.Trim(cg, "/"), "/") {
		if strings.HasPrefix(part, "user@") && strings.HasSuffix(part, ".service") {
			return false
		}
		if part == unit {
			return true
		}
	}
	return false
}
