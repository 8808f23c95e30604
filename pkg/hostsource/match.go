package hostsource

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
func (p *Preparer) matchProcesses(spec hostconfig.Workload, cg string) error {
	m := spec.Match
	pids, err := p.o.Procs.PIDs()
	if err != nil {
		return err
	}
	inside := map[int]bool{}
	if cur, err := p.o.Cgroups.Procs(cg); err == nil {
		for _, pid := range cur {
			inside[pid] = true
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
		if inside[pid] || pid == os.Getpid() || !p.adoptable(pid, *m, exe) || p.o.Sup.Ours(pid) {
			continue
		}
		move = append(move, pid)
	}
	if len(move) == 0 || p.o.DryRun {
		for _, pid := range move {
			fmt.Fprintf(p.o.Out, "move process %d to %s\n", pid, cg)
		}
		return nil
	}
	rep, err := p.o.Writer.AddProcs(cg, move)
	if len(rep.Moved) > 0 {
		p.o.Events.Emit(eventlog.Normal, "ProcessesMoved", spec.Name, "moved processes %v into cgroup %s", rep.Moved, cg)
	}
	return err
}

// adoptable says whether the match selects the process. Pid 1 and kernel
// threads never are: moving init or a kernel thread would break the host,
// whatever the config says. exe is the file m.Exe names, nil without one.
// Any read that fails (the process exited, or hides its files) is a no.
func (p *Preparer) adoptable(pid int, m hostconfig.Match, exe os.FileInfo) bool {
	if pid <= 1 {
		return false
	}
	st, err := p.o.Procs.Stat(pid)
	if err != nil || st.KernelThread() || !st.Running() {
		return false
	}
	argv, err := p.o.Procs.Cmdline(pid)
	if err != nil || len(argv) == 0 {
		return false
	}
	if m.Cmdline != "" && !strings.Contains(strings.Join(argv, " "), m.Cmdline) {
		return false
	}
	if m.Comm != "" {
		comm, err := p.o.Procs.Comm(pid)
		if ok, _ := path.Match(m.Comm, comm); err != nil || !ok {
			return false
		}
	}
	if m.UID != nil || m.GID != nil {
		o, err := p.o.Procs.Owner(pid)
		if err != nil || (m.UID != nil && !allAre(o.UIDs, *m.UID)) || (m.GID != nil && !allAre(o.GIDs, *m.GID)) {
			return false
		}
	}
	if exe != nil {
		got, err := p.o.Procs.ExeInfo(pid)
		if err != nil || !os.SameFile(got, exe) {
			return false
		}
	}
	if m.Unit != "" {
		cg, err := p.o.Procs.SystemdCgroup(pid)
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

// inSystemUnit reports whether a systemd cgroup path lies in the unit as
// the host's own service manager runs it: one of the slices from the root
// down (system.slice, then system-getty.slice, as systemd nests them), or
// the first unit below them. Anything deeper is a delegated sub-tree (a
// service's own children, a container's own systemd, a user@UID.service's
// manager): whoever runs there names its cgroups, so a unit's name there
// proves nothing about who started the process.
func inSystemUnit(cg, unit string) bool {
	parent := ""
	for _, part := range strings.Split(strings.Trim(cg, "/"), "/") {
		if !hostSlice(part, parent) {
			return part == unit
		}
		if part == unit {
			return true
		}
		parent = strings.TrimSuffix(part, ".slice")
	}
	return false
}

// hostSlice says whether name is a slice systemd puts right below the slice
// whose name without ".slice" is parent ("" for the root): system.slice at
// the root, system-getty.slice below system.slice; a slice named otherwise
// is not systemd's.
func hostSlice(name, parent string) bool {
	prefix, ok := strings.CutSuffix(name, ".slice")
	if ok && parent != "" {
		prefix, ok = strings.CutPrefix(prefix, parent+"-")
	}
	return ok && prefix != "" && !strings.Contains(prefix, "-")
}
