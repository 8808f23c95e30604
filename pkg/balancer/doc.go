// Package balancer decides where groups of tasks that hold no CPUs of their
// own should run: shared-pool pods, standalone workloads, virtual machines.
//
// The CPUs are split into partitions (NUMA nodes, or L3 caches), and every
// group is settled on the partition (or, when it is too large for one, the
// few nearby partitions) that keeps the predicted load lowest while keeping
// its memory local, in the manner of numad and of the group balancer: groups
// become as exclusive as possible while no CPU idles when work waits, since a
// saturated partition overflows into the shared pool.
//
// Everything here is pure: Place and Advise take measurements and return
// decisions; the parsers take file text. Reading the machine is the job of
// package probe, and applying a decision that of the agent.
package balancer
