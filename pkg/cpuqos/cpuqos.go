// Package cpuqos decides the CPU QoS of a workload on shared CPUs from its
// class and the cpuQOS sections of resource-qos-config: a BE workload is
// demoted (cpu.idle 1, SCHED_IDLE for the group, where the kernel has it,
// else the lowest weight), an LS workload keeps its weight, and an LS
// workload may ask for core isolation (a core scheduling cookie of its own).
// It is pure: pkg/sloconfig decodes the config, pkg/workload the workload text,
// pkg/decide turns the decision into cgroup writes and the agent applies
// the cookie.
package cpuqos

import "fmt"

// ClassConfig is one class's cpuQOS section; nil fields were not given.
type ClassConfig struct {
	Enable *bool
	// GroupIdentity is Alibaba Cloud Linux's cpu.bvt_warp_ns value: 2 and 1
	// latency-sensitive, 0 plain, -1 best-effort.
	GroupIdentity *int64
	// SchedIdle 1 asks for cpu.idle 1 (SCHED_IDLE for the group).
	SchedIdle *int64
	// CoreExpeller true gives every workload of the class a core scheduling
	// cookie of its own.
	CoreExpeller *bool
}

// Config is the CPU part of resource-qos-config; nil: no cpuQOS section.
type Config struct {
	LSR, LS, BE, System *ClassConfig
}

// The classes, as pkg/workload names them (upper case).
const (
	ClassLSE    = "LSE"
	ClassLSR    = "LSR"
	ClassLS     = "LS"
	ClassBE     = "BE"
	ClassSystem = "SYSTEM"
)

// Workload is what the decision reads of a workload.
type Workload struct {
	// Class is the workload's class: its label, else BE for Kubernetes
	// BestEffort and LS for the rest.
	Class string
	// CoreIsolation is the workload's own choice (annotation
	// locus.io/core-isolation); nil leaves it to the class.
	CoreIsolation *bool
}

// Kernel is what the node's kernel offers.
type Kernel struct {
	CPUIdle bool // cgroups have cpu.idle (Linux 5.15 and later)
}

// LowestShares is the smallest cpu.shares (v2: cpu.weight 1).
const LowestShares = 2

// Settings is a workload's CPU QoS.
type Settings struct {
	Enabled bool
	// Idle asks for cpu.idle 1 on the workload's cgroup; Shares > 0 for
	// that cpu.shares (the lowest weight where there is no cpu.idle).
	// Files not asked for go back to their originals.
	Idle   bool
	Shares int64
	// CoreIsolation asks for a core scheduling cookie of the workload's own.
	CoreIsolation bool
	Reason        string // why, fit for a status line
	CoreReason    string
}

// Compute is the CPU QoS of one workload.
func Compute(cfg Config, w Workload, k Kernel) Settings {
	cc, path, be := section(cfg, w.Class)
	var d Settings
	switch {
	case cc == nil:
		d.Reason = "no " + path + ": off"
	case cc.Enable == nil || !*cc.Enable:
		d.Reason = path + ".enable is not true: off"
	default:
		d.Enabled = true
		id := defaultIdentity(w.Class)
		if cc.GroupIdentity != nil {
			id = *cc.GroupIdentity
		}
		demote := id < 0 || (cc.SchedIdle != nil && *cc.SchedIdle == 1)
		switch {
		case demote && k.CPUIdle:
			d.Idle = true
			d.Reason = fmt.Sprintf("%s: groupIdentity %d, schedIdle %s: cpu.idle 1", path, id, text(cc.SchedIdle))
		case demote:
			d.Shares = LowestShares
			d.Reason = fmt.Sprintf("%s: groupIdentity %d, schedIdle %s: the kernel has no cpu.idle, lowest weight (cpu.shares %d)", path, id, text(cc.SchedIdle), LowestShares)
		default:
			d.Reason = fmt.Sprintf("%s: groupIdentity %d: keeps its weight, not idle", path, id)
		}
	}
	d.CoreIsolation, d.CoreReason = coreIsolation(cc, path, be, w.CoreIsolation)
	return d
}

// coreIsolation: the workload's annotation wins over the class's
// coreExpeller; a BE workload never gets a cookie, which would force the
// siblings of its CPUs idle for work that yields to everything.
func coreIsolation(cc *ClassConfig, path string, be bool, own *bool) (bool, string) {
	switch {
	case be:
		return false, "a BE workload is never isolated"
	case own != nil && *own:
		return true, "annotation locus.io/core-isolation is true"
	case own != nil:
		return false, "annotation locus.io/core-isolation is false"
	case cc != nil && cc.Enable != nil && *cc.Enable && cc.CoreExpeller != nil && *cc.CoreExpeller:
		return true, path + ".coreExpeller is true"
	}
	return false, "not asked for"
}

// section picks the cpuQOS section that governs a class. Unlabelled
// Guaranteed and Burstable workloads are LS, as the protocol maps them;
// LSR/LSE and SYSTEM read their own section when there is one.
func section(cfg Config, class string) (*ClassConfig, string, bool) {
	const p = "clusterStrategy."
	switch {
	case class == ClassBE:
		return cfg.BE, p + "beClass.cpuQOS", true
	case (class == ClassLSR || class == ClassLSE) && cfg.LSR != nil:
		return cfg.LSR, p + "lsrClass.cpuQOS", false
	case class == ClassSystem && cfg.System != nil:
		return cfg.System, p + "systemClass.cpuQOS", false
	}
	return cfg.LS, p + "lsClass.cpuQOS", false
}

// defaultIdentity is a class's groupIdentity when its section leaves it out.
func defaultIdentity(class string) int64 {
	switch class {
	case ClassBE:
		return -1
	case ClassSystem:
		return 0
	}
	return 2
}

func text(v *int64) string {
	if v == nil {
		return "unset"
	}
	return fmt.Sprint(*v)
}
