package hostsource

import (
	"fmt"
	"path"
	"strconv"

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
	scope, threads, err := p.libvirtScope(w.Match.LibvirtDomain)
	if err != nil {
		return domainNotRunning, nil
	}
	sub := path.Join(scope, workload.LibvirtSubtree)
	below = append(below, sub, path.Join(sub, workload.LibvirtEmulator))
	for _, v := range threads.VCPUs {
		below = append(below, path.Join(sub, "vcpu"+strconv.Itoa(v)))
	}
	return scope, below
}

// libvirtScope finds the running domain's scope under machine.slice and
// reads its threads' cgroups: an error says the domain is not running or
// its tree is missing parts.
func (p *Preparer) libvirtScope(domain string) (string, workload.LibvirtThreads, error) {
	var none workload.LibvirtThreads
	scopes, err := p.o.Cgroups.Children(cgroup.CPUSet, workload.LibvirtSlice)
	if err != nil {
		return "", none, fmt.Errorf("libvirt domain %q: no %s to find it in: %v", domain, workload.LibvirtSlice, err)
	}
	if len(scopes) > maxMachineScopes {
		return "", none, fmt.Errorf("libvirt domain %q: %d entries in %s, more than %d", domain, len(scopes), workload.LibvirtSlice, maxMachineScopes)
	}
	for _, rel := range scopes {
		m, err := workload.ParseLibvirtScope(path.Base(rel))
		if err != nil || !m.Is(domain) {
			continue // another machine's scope, or not a domain's
		}
		children, err := p.o.Cgroups.Children(cgroup.CPUSet, path.Join(rel, workload.LibvirtSubtree))
		if err != nil {
			return "", none, fmt.Errorf("libvirt domain %q: scope %s has no %s sub-tree: %v", domain, rel, workload.LibvirtSubtree, err)
		}
		names := make([]string, len(children))
		for i, c := range children {
			names[i] = path.Base(c)
		}
		threads, err := workload.ParseLibvirtThreads(names)
		if err != nil {
			return "", none, fmt.Errorf("libvirt domain %q: scope %s: %v", domain, rel, err)
		}
		return rel, threads, nil
	}
	return "", none, fmt.Errorf("libvirt domain %q is not running: no scope of it under %s", domain, workload.LibvirtSlice)
}

// prepareLibvirt checks that the domain's scope is the one the workload is
// given and that its tree is whole; nothing else is done for it.
func (p *Preparer) prepareLibvirt(spec hostconfig.Workload, cg string) (bool, *workload.Problem) {
	scope, _, err := p.libvirtScope(spec.Match.LibvirtDomain)
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
