// Package decide is the agent's pure core: from the machine, the workloads and
// the assignments already in force, it decides which CPUs each workload gets,
// what the shared pools are, and which cgroup values follow. No I/O.
package decide
