package cgroup

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/locus-project/locus/pkg/cgroupfile"
)

// Knob is the logical name of a cgroup file Locus writes (cgroupfile.Knob:
// the decision names files without importing this package, as io/fs names
// file modes for os).
type Knob = cgroupfile.Knob

// The knobs, as the decision names them.
const (
	CPUSetCPUs        = cgroupfile.CPUSetCPUs
	CPUSetMems        = cgroupfile.CPUSetMems
	MemoryMin         = cgroupfile.MemoryMin
	MemoryLow         = cgroupfile.MemoryLow
	MemoryHigh        = cgroupfile.MemoryHigh
	MemoryLimit       = cgroupfile.MemoryLimit
	MemorySoftLimit   = cgroupfile.MemorySoftLimit
	MemoryWmarkRatio  = cgroupfile.MemoryWmarkRatio
	MemoryWmarkScale  = cgroupfile.MemoryWmarkScale
	MemoryWmarkHigh   = cgroupfile.MemoryWmarkHigh
	MemoryWmarkMinAdj = cgroupfile.MemoryWmarkMinAdj
	CPUQuota          = cgroupfile.CPUQuota
	CPUPeriod         = cgroupfile.CPUPeriod
	CPUShares         = cgroupfile.CPUShares
	CPUIdle           = cgroupfile.CPUIdle
	CPUBurst          = cgroupfile.CPUBurst
)

// Placement is where a knob lives on one cgroup version.
type Placement struct {
	Controller Controller // v1 hierarchy holding the file; "" on v2
	File       string
	// Extension marks files only Alibaba Cloud Linux / Anolis kernels have.
	// Their absence is reported as unsupported, never as an error.
	Extension bool
	// Since, when set, names the upstream kernel that added the file: older
	// kernels lack it, which is reported as unsupported, never as an error.
	Since string
}

// Order says how writes of a knob must be sequenced over a cgroup tree.
type Order int

const (
	// Unordered knobs are independent between parent and child.
	Unordered Order = iota
	// Nested values must stay subsets of the parent's (cpuset.cpus/mems). v1
	// refuses a child outside its parent (EACCES) and a parent narrowed below
	// a child (EBUSY); v2 accepts both but the child's effective set shrinks.
	Nested
	// Protection values only take effect up to the parent's (memory.min/low):
	// raising parents first and lowering children first never drops
	// protection in between.
	Protection
)

// Spec declares one knob: its files, the values it takes, how they compare.
type Spec struct {
	Knob     Knob
	V1, V2   *Placement // nil: the version has no such file
	ReadOnly bool       // the kernel computes it; Locus only reads it
	Order    Order
	// Resets names a knob whose file the kernel resets when this one
	// changes (leaving cpu.idle 1 sets cpu.shares to 1024, whatever it
	// was): its original is recorded with this one's, and in a batch this
	// knob is written first, so a restore of both ends with the original.
	Resets Knob
	kind   valueKind
}

var registry = map[Knob]*Spec{}

func declare(s Spec) {
	if _, dup := registry[s.Knob]; dup {
		panic("cgroup: knob declared twice: " + string(s.Knob))
	}
	registry[s.Knob] = &s
}

// maxBurstUS bounds a burst far above any the decision asks (a second of
// 1,000 CPUs); the kernel's own bound is higher still.
const maxBurstUS = 1_000_000_000

func v1(c Controller, file string) *Placement { return &Placement{Controller: c, File: file} }
func v1Ext(c Controller, file string) *Placement {
	return &Placement{Controller: c, File: file, Extension: true}
}
func v2(file string) *Placement    { return &Placement{File: file} }
func v2Ext(file string) *Placement { return &Placement{File: file, Extension: true} }

// since marks a placement as present only from an upstream kernel on.
func since(p *Placement, kernel string) *Placement { p.Since = kernel; return p }

func init() {
	declare(Spec{Knob: CPUSetCPUs, V1: v1(CPUSet, "cpuset.cpus"), V2: v2("cpuset.cpus"), Order: Nested, kind: cpuList{}})
	declare(Spec{Knob: CPUSetMems, V1: v1(CPUSet, "cpuset.mems"), V2: v2("cpuset.mems"), Order: Nested, kind: cpuList{}})
	declare(Spec{Knob: MemoryMin, V1: v1Ext(Memory, "memory.min"), V2: v2("memory.min"), Order: Protection, kind: bytesKind{}})
	declare(Spec{Knob: MemoryLow, V1: v1Ext(Memory, "memory.low"), V2: v2("memory.low"), Order: Protection, kind: bytesKind{}})
	declare(Spec{Knob: MemoryHigh, V1: v1Ext(Memory, "memory.high"), V2: v2("memory.high"), kind: bytesKind{}})
	declare(Spec{Knob: MemoryLimit, V1: v1(Memory, "memory.limit_in_bytes"), V2: v2("memory.max"), kind: bytesKind{v1Unlimited: "-1"}})
	declare(Spec{Knob: MemorySoftLimit, V1: v1(Memory, "memory.soft_limit_in_bytes"), kind: bytesKind{v1Unlimited: "-1"}})
	declare(Spec{Knob: MemoryWmarkRatio, V1: v1Ext(Memory, "memory.wmark_ratio"), V2: v2Ext("memory.wmark_ratio"), kind: intRange{0, 100}})
	declare(Spec{Knob: MemoryWmarkScale, V1: v1Ext(Memory, "memory.wmark_scale_factor"), V2: v2Ext("memory.wmark_scale_factor"), kind: intRange{1, 1000}})
	declare(Spec{Knob: MemoryWmarkHigh, V1: v1Ext(Memory, "memory.wmark_high"), V2: v2Ext("memory.wmark_high"), ReadOnly: true, kind: bytesKind{}})
	declare(Spec{Knob: MemoryWmarkMinAdj, V1: v1Ext(Memory, "memory.wmark_min_adj"), V2: v2Ext("memory.wmark_min_adj"), kind: intRange{-25, 50}})
	declare(Spec{Knob: CPUQuota, V1: v1(CPU, "cpu.cfs_quota_us"), V2: v2("cpu.max"), kind: quotaKind{}})
	declare(Spec{Knob: CPUPeriod, V1: v1(CPU, "cpu.cfs_period_us"), kind: intRange{1000, 1000000}})
	declare(Spec{Knob: CPUShares, V1: v1(CPU, "cpu.shares"), V2: v2("cpu.weight"), kind: sharesKind{}})
	declare(Spec{Knob: CPUBurst, V1: since(v1(CPU, "cpu.cfs_burst_us"), "5.14"), V2: since(v2("cpu.max.burst"), "5.14"), kind: intRange{0, maxBurstUS}})
	declare(Spec{Knob: CPUIdle, V1: since(v1(CPU, "cpu.idle"), "5.15"), V2: since(v2("cpu.idle"), "5.15"), Resets: CPUShares, kind: intRange{0, 1}})
}

// Lookup returns the declaration of k.
func Lookup(k Knob) (*Spec, bool) {
	s, ok := registry[k]
	return s, ok
}

// Knobs lists every declared knob, sorted: the caller's own copy.
func Knobs() []Knob { return slices.Clone(sortedKnobs()) }

// sortedKnobs is every declared knob, sorted, listed once: the registry is
// complete after init, and ParseOriginalKey, which walks it for every key of
// the originals store when pods go, was sorting it anew each time (4 % of
// the CPU of a reconcile that removes a pod among 300).
var sortedKnobs = sync.OnceValue(func() []Knob {
	return slices.Sorted(maps.Keys(registry))
})

// Placement returns where the knob lives on v, or nil if v has no such file.
func (s *Spec) Placement(v Version) *Placement {
	if v == V2 {
		return s.V2
	}
	return s.V1
}

// Validate checks a logical value; the error names the knob and the value.
func (s *Spec) Validate(value string) error {
	if err := s.kind.validate(value); err != nil {
		return fmt.Errorf("%s: value %q: %v", s.Knob, value, err)
	}
	return nil
}

// Encode validates a logical value and returns the text v's file takes.
func (s *Spec) Encode(v Version, value string) (string, error) {
	if err := s.Validate(value); err != nil {
		return "", err
	}
	return s.kind.encode(v, value), nil
}

// Equal reports whether a file holding current already means want (both file
// texts of version v): "0-3" equals "0,1,2,3", -1 equals 9223372036854771712,
// 100000000 equals the page-rounded 99999744.
func (s *Spec) Equal(v Version, current, want string) bool {
	return s.kind.equal(v, current, want)
}

// Verbatim reports whether the kernel keeps this knob's encoded text as it
// is, so that a file just written reads back the text written: CPU lists
// (encoded in the kernel's own spelling) and plain integers. Memory sizes
// are not (the kernel rounds them to pages), nor files it reformats.
func (s *Spec) Verbatim() bool {
	switch s.kind.(type) {
	case cpuList, intRange:
		return true
	}
	return false
}
