package workload

import "time"

// MemsFollowing is a moved workload whose cpuset.mems still allows the
// NUMA nodes it left while its memory follows it: narrowing cpuset.mems
// makes the kernel migrate, inside the write and without any stall budget,
// everything left outside, so it is narrowed only once little is left.
// The checkpoint keeps it, so that an agent restarted meanwhile narrows
// it too.
type MemsFollowing struct {
	// Wide are the NUMA nodes cpuset.mems allows meanwhile: those it
	// allowed before the move and those it allows after.
	Wide []int `json:"wide"`
	// Since is when the workload was moved: it is narrowed at the latest
	// a bounded time later.
	Since time.Time `json:"since"`
}
