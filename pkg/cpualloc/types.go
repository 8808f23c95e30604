// Package cpuset is Locus's topology-aware CPU allocator. It is pure: it takes a
// topology, the current occupancy and a request, and returns a CPU set or an
// error. Same input, same output; no I/O, no clocks, no randomness.
package cpualloc

import (
	"k8s.io/utils/cpuset"
)

// Policy says which CPUs a request may receive.
type Policy string

const (
	// FullPCPUs hands out whole physical cores only; a count that is not a
	// multiple of the SMT width is rejected, except on hybrid machines, where
	// single-thread cores make any count whole cores.
	FullPCPUs Policy = "full-pcpus"
	// FullPCPUsThenThreads is the default (an empty Policy): whole cores for
	// the whole-core part of the count, then the remaining threads, from a
	// core no other workload uses before a left-over beside one. It holds at
	// most one core in part whenever its domain has the whole cores. For a multiple of the SMT
	// width it is exactly FullPCPUs.
	FullPCPUsThenThreads Policy = "full-pcpus-then-threads"
	// SpreadByPCPUs takes one thread per physical core before any sibling.
	SpreadByPCPUs Policy = "spread-by-pcpus"
	// DistributeAcrossNUMA splits the request evenly over the fewest nodes that fit.
	DistributeAcrossNUMA Policy = "distribute-across-numa"
	// StaticBurst draws limits.cpu CPUs from CPUs no pod owns exclusively; burst
	// pods may overlap while the summed requests on every CPU stay <= 1 CPU.
	StaticBurst Policy = "static-burst"
)

// NUMAStrategy chooses among equally good candidates.
type NUMAStrategy string

const (
	// MostAllocated packs: prefer the fullest node that fits (the default).
	MostAllocated NUMAStrategy = "most-allocated"
	// LeastAllocated spreads: prefer the emptiest node that fits.
	LeastAllocated NUMAStrategy = "least-allocated"
)

// State is the node's current occupancy.
type State struct {
	// Exclusive holds CPUs some pod owns alone.
	Exclusive Bits
	// BurstMilli is, per CPU, the summed CPU request (in millicores) of the
	// static-burst pods that share it. A static-burst pod with request R
	// millicores on N CPUs adds R/N (rounded up) to each of its CPUs.
	BurstMilli map[int]int64
	// Free is, per NUMA node id, the memory and huge pages the node can
	// still give pinned workloads: its capacity less what the system, the
	// kubelet and every pinned workload already hold there. Nil means memory
	// is not accounted: every node holds any request, as before memory was
	// a dimension of the decision.
	Free map[int]Memory
}

// Memory is memory by kind, in bytes: a request's, or what a node has free.
type Memory struct {
	Bytes        uint64 // ordinary memory
	HugePages2Mi uint64 // 2 MiB huge pages
	HugePages1Gi uint64 // 1 GiB huge pages
}

// Request asks for CPUs.
type Request struct {
	CPUs         int
	Policy       Policy       // "" means FullPCPUsThenThreads
	NUMAStrategy NUMAStrategy // "" means MostAllocated
	// RequestMilli is the pod's CPU request; used by StaticBurst only. Zero
	// means the request equals CPUs*1000.
	RequestMilli int64
	// UseReserved allows reserved and isolated CPUs to be handed out.
	UseReserved bool
	// Memory is the memory and huge pages the workload needs on the nodes
	// of its cpuset.mems. Zero asks for none: any node fits.
	Memory Memory
	// MemNodes, for Resize only, are the nodes the workload's memory is
	// held on (the Result.MemNodes it was placed with): a grow takes CPUs
	// only from them, since its memory stays where it is. Empty: any node.
	MemNodes []int
	// Near is the NUMA nodes the workload's devices sit on (a GPU's, a
	// NIC's): the CPUs and memory are chosen on them when they fit, else on
	// the nearest nodes by SLIT distance, and Result.Unaligned says so.
	// Empty: no device to be near. Allocate only; Resize keeps a set where
	// it is.
	Near []int
}

// Result is an allocation.
type Result struct {
	CPUs cpuset.CPUSet
	// IDs are the same CPUs as a list, in no order, from RankBitsFree
	// alone, which leaves CPUs (and MemHeld) empty; nil otherwise.
	IDs       []int
	NUMANodes []int // sorted ids of the nodes the CPUs span
	// MemNodes are the sorted ids of the nodes cpuset.mems names: the CPUs'
	// nodes, or a larger group of nodes, nearest first, when the CPUs' nodes
	// cannot hold the memory. Always a superset of NUMANodes.
	MemNodes []int
	// MemHeld is, when memory is accounted (State.Free set and the request
	// asks for some), what the workload holds on each node of MemNodes:
	// Hold(MemNodes, State.Free, Request.Memory). Nil otherwise.
	MemHeld map[int]Memory
	// Unaligned is set when the request named Near nodes and its CPUs or
	// memory (NUMANodes, MemNodes) lie on some other node too: they did not
	// fit on the devices' nodes, and a caller tells so.
	Unaligned bool
	// Policy is the rule that was applied: the requested policy, except
	// that the default reports FullPCPUs when the count was a multiple of
	// the SMT width (the result is then full-pcpus's) and
	// FullPCPUsThenThreads otherwise. Asking for Policy again on the same
	// state gives the same CPUs.
	Policy Policy
}
