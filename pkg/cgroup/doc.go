// Package cgroup is the only code in Locus that writes cgroup files.
//
// It resolves a workload's cgroup (a path relative to the cgroup root) to files
// on cgroup v1 or v2, refuses any path that would leave the root, declares every
// file Locus may write in one registry (validation, encoding, comparison), and
// writes batches in an order that keeps every parent a superset of its children.
// Before the first change to a file it durably records the file's original value
// so the change can be undone.
//
// Pure parts (path checks, registry, value handling, the tree planner) take data
// and return decisions; the I/O parts (Hierarchy readers, Writer, FileStore) are
// thin shells around them.
package cgroup
