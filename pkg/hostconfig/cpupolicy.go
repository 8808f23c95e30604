package hostconfig

import "fmt"

// The CPU policies of a libvirt domain's threads (Workload.CPUPolicy).
const (
	// CPUPolicyShared gives every thread of the domain the workload's
	// cpuset, as for any other workload.
	CPUPolicyShared = "shared"
	// CPUPolicyDedicated gives each vCPU thread's cgroup a whole core of
	// the workload's exclusive CPUs and the emulator threads the rest.
	CPUPolicyDedicated = "dedicated"
)

// Dedicated says whether the workload asks for dedicated vCPUs.
func (w Workload) Dedicated() bool { return w.CPUPolicy == CPUPolicyDedicated }

// validateCPUPolicy checks cpuPolicy: shared (the default) or dedicated,
// and dedicated only for a libvirt domain, whose vCPU threads have cgroups
// of their own to pin. That the workload asks for exclusive CPUs is
// checked where its CPU need is read (workload.DeriveConfig).
func (w Workload) validateCPUPolicy() error {
	switch w.CPUPolicy {
	case "", CPUPolicyShared:
		return nil
	case CPUPolicyDedicated:
		if w.Match == nil || w.Match.LibvirtDomain == "" {
			return fmt.Errorf("cpuPolicy: %q needs match.libvirtDomain: only a libvirt domain has a cgroup per vCPU thread", w.CPUPolicy)
		}
		return nil
	}
	return fmt.Errorf("cpuPolicy: %q: want %s (the default) or %s", truncate(w.CPUPolicy), CPUPolicyShared, CPUPolicyDedicated)
}

// truncate bounds a value repeated in an error: the file may be large.
func truncate(s string) string {
	const maxShown = 64
	if len(s) <= maxShown {
		return s
	}
	return s[:maxShown] + "…"
}
