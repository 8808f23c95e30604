package memqos

// Knob is a memcg file name, the same under cgroup v1 and v2.
type Knob string

// The files a decision can name.
const (
	MemoryMin         Knob = "memory.min"
	MemoryLow         Knob = "memory.low"
	MemoryHigh        Knob = "memory.high"
	MemoryWmarkRatio  Knob = "memory.wmark_ratio"
	MemoryWmarkHigh   Knob = "memory.wmark_high"
	MemoryWmarkMinAdj Knob = "memory.wmark_min_adj"
	// MemorySoftLimit only appears with Options.V1SoftLimitForLow.
	MemorySoftLimit Knob = "memory.soft_limit_in_bytes"
)

// Support tells on which kernels a file exists.
type Support string

// Support levels.
const (
	Upstream  Support = "upstream"  // every kernel with this cgroup version
	Extension Support = "extension" // only Alibaba Cloud Linux / Anolis kernels
	Absent    Support = "absent"    // no kernel has it under this cgroup version
)

// KnobInfo describes one file for the cgroup writer. A writer writes a file
// only where it exists, says so when it is missing, and never fails the
// workload for a missing Extension file.
type KnobInfo struct {
	Knob     Knob
	V1, V2   Support
	Unit     string // "bytes", "percent" or "adj" (a signed percentage)
	ReadOnly bool   // the kernel computes it; the value is only the expected reading
}

// Knobs lists every file in the order decisions list them.
var Knobs = []KnobInfo{
	{Knob: MemoryMin, V1: Extension, V2: Upstream, Unit: "bytes"},
	{Knob: MemoryLow, V1: Extension, V2: Upstream, Unit: "bytes"},
	{Knob: MemoryHigh, V1: Extension, V2: Upstream, Unit: "bytes"},
	{Knob: MemoryWmarkRatio, V1: Extension, V2: Extension, Unit: "percent"},
	{Knob: MemoryWmarkHigh, V1: Extension, V2: Extension, Unit: "bytes", ReadOnly: true},
	{Knob: MemoryWmarkMinAdj, V1: Extension, V2: Extension, Unit: "adj"},
	{Knob: MemorySoftLimit, V1: Upstream, V2: Absent, Unit: "bytes"},
}

// Info returns the description of k, or false for an unknown file.
func Info(k Knob) (KnobInfo, bool) {
	for _, i := range Knobs {
		if i.Knob == k {
			return i, true
		}
	}
	return KnobInfo{}, false
}
