package hostsource

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/workload"
)

// Libvirt is the source of a `match: {libvirtDomain: NAME}` workload: the
// domain's scope, which libvirt and systemd made, written in place; nothing
// is created, started or moved for it.
const Libvirt = "libvirt"

// domainNotRunning is the cgroup a libvirt workload is given while its
// domain has no scope: one that never exists, so nothing is written for it
// (Prepare reports why).
const domainNotRunning = workload.LibvirtSlice + "/locus-libvirt-domain-not-running"

// maxMachineScopes bounds the entries of machine.slice read to find a
// domain: a host runs far fewer machines.
const maxMachineScopes = 65536

// CgroupPath is where the workload's processes live: the HostConfig's path
// for it, or, for a libvirt domain, the scope the domain runs in now (its
// name holds the domain's id, new at every start) and below it the cgroups
// libvirt made for its threads, which the workload's cpuset must reach too
// (on cgroup v1 a cpuset cannot narrow below its children's).
func (p *Preparer) CgroupPath(cfg *hostconfig.HostConfig, w hostconfig.Workload) (cg string, below []string) {
	if KindOf(w) != Libvirt {
		return cfg.CgroupPath(w), nil
	}
	scope, sub, threads, err := p.libvirtScope(w.Match.LibvirtDomain)
	if err != nil {
		return domainNotRunning, nil
	}
	if sub != scope {
		below = append(below, sub)
	}
	below = append(below, path.Join(sub, workload.LibvirtEmulator))
	for _, v := range threads.VCPUs {
		below = append(below, path.Join(sub, "vcpu"+strconv.Itoa(v)))
	}
	return scope, below
}

// libvirtScope finds the running domain's cgroup in either of libvirt's
// layouts (systemd's scope under machine.slice, or libvirt's own group
// under machine) and reads its threads' cgroups: where they are (sub) and
// which. An error says the domain is not running or its tree is missing
// parts.
func (p *Preparer) libvirtScope(domain string) (scope, sub string, _ workload.LibvirtThreads, _ error) {
	var none workload.LibvirtThreads
	var parents []string
	for _, l := range workload.LibvirtLayouts {
		dirs, err := p.o.Cgroups.Children(cgroup.CPUSet, l.Parent)
		if err != nil {
			continue // no such parent: libvirt lays domains out the other way here
		}
		parents = append(parents, l.Parent)
		if len(dirs) > maxMachineScopes {
			return "", "", none, fmt.Errorf("libvirt domain %q: %d entries in %s, more than %d", domain, len(dirs), l.Parent, maxMachineScopes)
		}
		for _, rel := range dirs {
			m, err := l.Parse(path.Base(rel))
			if err != nil || !m.Is(domain) {
				continue // another machine's cgroup, or not a domain's
			}
			sub := l.ThreadsOf(rel)
			children, err := p.o.Cgroups.Children(cgroup.CPUSet, sub)
			if err != nil && l.Threads != "" {
				return "", "", none, fmt.Errorf("libvirt domain %q: %s has no %s sub-tree: %v", domain, rel, l.Threads, err)
			}
			if err != nil {
				return "", "", none, fmt.Errorf("libvirt domain %q: %s: %v", domain, rel, err)
			}
			names := make([]string, len(children))
			for i, c := range children {
				names[i] = path.Base(c)
			}
			threads, err := workload.ParseLibvirtThreads(names)
			if err != nil {
				return "", "", none, fmt.Errorf("libvirt domain %q: %s: %v", domain, rel, err)
			}
			return rel, sub, threads, nil
		}
	}
	if len(parents) == 0 {
		return "", "", none, fmt.Errorf("libvirt domain %q: no %s nor %s to find it in", domain, workload.LibvirtSlice, workload.LibvirtPartition)
	}
	return "", "", none, fmt.Errorf("libvirt domain %q is not running: no cgroup of it under %s", domain, strings.Join(parents, " or "))
}

// prepareLibvirt checks that the domain's scope is the one the workload is
// given and that its tree is whole; nothing else is done for it.
func (p *Preparer) prepareLibvirt(spec hostconfig.Workload, cg string) (bool, *workload.Problem) {
	scope, _, _, err := p.libvirtScope(spec.Match.LibvirtDomain)
	if err != nil {
		return false, &workload.Problem{Workload: spec.Name, Reason: "LibvirtDomainNotFound", Message: err.Error() + "; nothing written"}
	}
	if scope != cg {
		// The domain restarted between the two looks: the next reconcile
		// gives the workload its new scope.
		return false, &workload.Problem{Workload: spec.Name, Reason: "LibvirtDomainNotFound",
			Message: fmt.Sprintf("libvirt domain %q moved to %s since this reconcile began; nothing written", spec.Match.LibvirtDomain, scope)}
	}
	return true, nil
}
