package main

import (
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/runner"
	"github.com/locus-project/locus/pkg/topology"
)

// The flags of locus run read into the runner's request and the host it
// runs on: every value checked before anything is touched.

// parse checks every flag and reads the machine and the agent's config.
func (o *runOptions) parse() (runner.Request, runner.Host, error) {
	req := runner.Request{CPUs: o.cpus, Policy: cpualloc.Policy(o.policy),
		NUMAStrategy: cpualloc.NUMAStrategy(o.strategy), QoS: memqos.Class(strings.ToUpper(o.qos))}
	if o.cpus < 0 {
		return req, runner.Host{}, usagef("--cpus %d is negative", o.cpus)
	}
	switch o.memQoS {
	case "auto":
		req.MemoryQoS = true
	case "none":
	default:
		return req, runner.Host{}, usagef("--memory-qos %q: want auto or none", o.memQoS)
	}
	switch o.cpuQoS {
	case "auto":
		req.CPUQoS = true
	case "none":
	default:
		return req, runner.Host{}, usagef("--cpu-qos %q: want auto or none", o.cpuQoS)
	}
	for _, m := range []struct {
		flag, val string
		dst       *int64
	}{{"--memory-request", o.memRequest, &req.MemoryRequest}, {"--memory-limit", o.memLimit, &req.MemoryLimit},
		{"--hugepages-2Mi", o.hugePages2Mi, &req.HugePages2Mi}, {"--hugepages-1Gi", o.hugePages1Gi, &req.HugePages1Gi}} {
		if m.val == "" {
			continue
		}
		q, err := nonNegativeQuantity(m.flag, m.val)
		if err != nil {
			return req, runner.Host{}, err
		}
		*m.dst = q.Value()
	}
	if err := req.Validate(); err != nil {
		return req, runner.Host{}, runError(err)
	}
	if _, err := cgroup.ParseVersion(o.cgroupVersion); err != nil {
		return req, runner.Host{}, usagef("--cgroup-version: %v", err)
	}
	host, err := o.host()
	if err != nil {
		return req, host, err
	}
	if err := cgroup.CheckRel(o.cgroupParent); err != nil || o.cgroupParent == "" {
		return req, host, usagef("--cgroup-parent %q: want a path relative to the cgroup root", o.cgroupParent)
	}
	return req, host, nil
}

// host reads the topology and the agent's reserved CPUs and pools (and its
// cgroup parent, unless --cgroup-parent was given).
func (o *runOptions) host() (runner.Host, error) {
	var h runner.Host
	reserved, bePool := o.reservedCPUs, ""
	if o.configFile != "" {
		cfg, err := hostconfig.Load(o.configFile)
		if err != nil {
			return h, usagef("--config: %v", err)
		}
		if !o.reservedSet {
			reserved = cfg.ReservedCPUs
		}
		bePool, h.UnrestrictedMems = cfg.BEPool, cfg.UnrestrictedMems
		if !o.parentSet {
			o.cgroupParent = cfg.CgroupParent
		}
	}
	var err error
	if h.Reserved, err = topology.ParseCPUList(reserved); err != nil {
		return h, usagef("reserved CPUs: %v", err)
	}
	if h.BEPool, err = topology.ParseCPUList(bePool); err != nil {
		return h, usagef("bePool: %v", err)
	}
	h.Topology, err = topology.Discover(o.sysfsRoot)
	return h, err
}
