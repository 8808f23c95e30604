package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/workload"
)

// byName are the targets `locus numastat` finds by a name rather than by a
// process id or cgroup: a libvirt domain (its scope and the cgroups of its
// threads below it) or a command name (every process of that comm, as
// `numastat -p qemu-kvm` sums them).
type byName struct {
	domain, comm string
	also         string // the flags' names for a usage error; "" where not offered
}

// maxComm is the kernel's bound on a command name (TASK_COMM_LEN less NUL).
const maxComm = 15

// maxMachineScopes bounds the entries of machine.slice read to find a
// domain, as the agent bounds them.
const maxMachineScopes = 65536

func (b *byName) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&b.domain, "libvirt-domain", "", "a libvirt QEMU domain, by name (its scope under machine.slice and its threads' cgroups)")
	f.StringVar(&b.comm, "comm", "", "every process of this command name (/proc/PID/comm, at most 15 bytes)")
}

func (b byName) given() int {
	n := 0
	for _, s := range []string{b.domain, b.comm} {
		if s != "" {
			n++
		}
	}
	return n
}

// checkName refuses a flag's name that cannot be one: too long, a '/', a
// control character or invalid UTF-8.
func checkName(flag, name string, limit int) error {
	if len(name) > limit {
		return usagef("--%s: %d bytes, more than %d", flag, len(name), limit)
	}
	if !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return r == '/' || r < 0x20 || r == 0x7f }) {
		return usagef("--%s %q: a name has no '/', control character or invalid UTF-8", flag, name)
	}
	return nil
}

// domainPIDs finds the running domain's cgroup in either of libvirt's
// layouts (workload.LibvirtLayouts) and lists the processes of the scope and of every cgroup below it (QEMU sits
// in libvirt/emulator, its vCPU threads' cgroups name it again), each once.
func (o localityTarget) domainPIDs(domain string) (string, []int, error) {
	if err := checkName("libvirt-domain", domain, hostconfig.MaxLibvirtDomain); err != nil {
		return "", nil, err
	}
	h, err := o.hierarchy()
	if err != nil {
		return "", nil, err
	}
	var parents []string
	for _, l := range workload.LibvirtLayouts {
		dirs, err := h.Children(cgroup.CPUSet, l.Parent)
		if err != nil {
			continue // libvirt lays domains out the other way here
		}
		parents = append(parents, l.Parent)
		if len(dirs) > maxMachineScopes {
			return "", nil, fmt.Errorf("libvirt domain %q: %d entries in %s, more than %d", domain, len(dirs), l.Parent, maxMachineScopes)
		}
		for _, scope := range dirs {
			if m, err := l.Parse(path.Base(scope)); err == nil && m.Is(domain) {
				return domainCgroupPIDs(h, domain, scope, l.ThreadsOf(scope))
			}
		}
	}
	if len(parents) == 0 {
		return "", nil, fmt.Errorf("libvirt domain %q: no %s nor %s to find it in", domain, workload.LibvirtSlice, workload.LibvirtPartition)
	}
	return "", nil, fmt.Errorf("libvirt domain %q is not running: no cgroup of it under %s", domain, strings.Join(parents, " or "))
}

// domainCgroupPIDs lists the processes of a domain's cgroup and of its
// threads' cgroups in sub (the cgroup itself in libvirt's own layout).
func domainCgroupPIDs(h *cgroup.Hierarchy, domain, scope, sub string) (string, []int, error) {
	cgs := []string{scope}
	if children, err := h.Children(cgroup.CPUSet, sub); err == nil {
		names := make([]string, len(children))
		for i, c := range children {
			names[i] = path.Base(c)
		}
		if _, err := workload.ParseLibvirtThreads(names); err != nil {
			return scope, nil, fmt.Errorf("libvirt domain %q: %s: %v", domain, scope, err)
		}
		if sub != scope {
			cgs = append(cgs, sub)
		}
		cgs = append(cgs, children...)
	}
	var pids []int
	for _, cg := range cgs {
		ps, err := h.Procs(cg)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return scope, nil, fmt.Errorf("libvirt domain %q: %s: %w", domain, cg, err)
		}
		pids = append(pids, ps...)
	}
	slices.Sort(pids)
	return scope, slices.Compact(pids), nil
}

// commPIDs lists the processes whose command name is comm; those that
// exit meanwhile are left out.
func (o localityTarget) commPIDs(comm string) ([]int, error) {
	if err := checkName("comm", comm, maxComm); err != nil {
		return nil, err
	}
	proc := procfs.New(o.procRoot)
	all, err := proc.PIDs()
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, pid := range all {
		if c, err := proc.Comm(pid); err == nil && c == comm {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("no process of command name %q in %s", comm, o.procRoot)
	}
	return pids, nil
}

// pidsOf lists the processes of a cgroup target or a target by name, and
// labels it.
func (o localityTarget) pidsOf() (string, []int, error) {
	switch {
	case o.domain != "":
		scope, pids, err := o.domainPIDs(o.domain)
		if err != nil {
			return "", nil, err
		}
		return fmt.Sprintf("libvirt domain %s (%s)", o.domain, scope), pids, nil
	case o.comm != "":
		pids, err := o.commPIDs(o.comm)
		return "command " + o.comm, pids, err
	}
	pids, err := o.cgroupPIDs(o.cgroup)
	return "cgroup " + o.cgroup, pids, err
}

func (o localityTarget) hierarchy() (*cgroup.Hierarchy, error) {
	v, err := cgroup.ParseVersion(o.cgroupVersion)
	if err != nil {
		return nil, usagef("--cgroup-version: %v", err)
	}
	return cgroup.Open(o.cgroupRoot, v)
}
