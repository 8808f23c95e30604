package cgroupfile

// Knob is the logical name of a cgroup file Locus writes. It is the v1 file
// name; each cgroup version maps it to its own file (pkg/cgroup's registry).
type Knob string

const (
	CPUSetCPUs        Knob = "cpuset.cpus"
	CPUSetMems        Knob = "cpuset.mems"
	MemoryMin         Knob = "memory.min"
	MemoryLow         Knob = "memory.low"
	MemoryHigh        Knob = "memory.high"
	MemoryLimit       Knob = "memory.limit_in_bytes"      // v2: memory.max
	MemorySoftLimit   Knob = "memory.soft_limit_in_bytes" // v1 only
	MemoryWmarkRatio  Knob = "memory.wmark_ratio"
	MemoryWmarkScale  Knob = "memory.wmark_scale_factor"
	MemoryWmarkHigh   Knob = "memory.wmark_high" // read-only, derived by the kernel
	MemoryWmarkMinAdj Knob = "memory.wmark_min_adj"
	CPUQuota          Knob = "cpu.cfs_quota_us"  // v2: cpu.max (quota field)
	CPUPeriod         Knob = "cpu.cfs_period_us" // v1 only; v2 keeps it in cpu.max
	CPUShares         Knob = "cpu.shares"        // v2: cpu.weight, converted
	// CPUIdle 1 makes the group SCHED_IDLE (Linux 5.15 and later, v1 and v2):
	// it runs only when nothing else on the CPU wants to.
	CPUIdle Knob = "cpu.idle"
	// CPUBurst is the CPU time, in microseconds, a group may carry over
	// from periods it did not use its quota in (CFS bandwidth burst, Linux
	// 5.14 and later); the kernel refuses a burst above the quota.
	CPUBurst Knob = "cpu.cfs_burst_us" // v2: cpu.max.burst
)

// Op asks for a knob of a cgroup to hold a logical value (pkg/cgroup's
// Spec.Validate says which values each knob takes).
type Op struct {
	Cgroup string // relative to the root, e.g. "kubepods/burstable/pod<uid>/<cid>"
	Knob   Knob
	Value  string
	// Settle marks a value that is the file's owner's own, not Locus's
	// (a CFS quota brought back to the one the kubelet derives from the
	// limit): once the file holds it, its recorded original is forgotten,
	// as after a restore, so that nothing later writes back an older value.
	Settle bool
	// Known says the caller knows what the file holds now, Holds: it read
	// or wrote the file lately in the same cgroup directory, and trusts it
	// unchanged since. The writer then takes Holds for the file's text
	// instead of reading it again, which matters when one change (a shared
	// CPU pool growing or shrinking) rewrites hundreds of files.
	Known bool
	Holds string
	// Pool names the shared CPU pool ("shared", "be") whose CPUs or mems
	// the value is, when it is one: such a file changes whenever the pool
	// does, together with those of every other workload on it. The writer
	// ignores it; the executor reports a pool's move once for the node
	// rather than once per workload.
	Pool string
}

// Target names a knob of a cgroup without a value: its original is given
// back.
type Target struct {
	Cgroup string
	Knob   Knob
}
