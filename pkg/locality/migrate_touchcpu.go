//go:build linux

package locality

import (
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/topology"
)

// With the kernel's NUMA balancing on, the migrator's touch of a hidden page
// (migrate_hidden.go) takes the NUMA hinting fault itself, and the kernel
// may then move the page to the node of the CPU the migrator runs on: its
// two-stage filter moves a page at its second fault from one node, and the
// migrator touches a page again when the balancer hides it again. From a CPU
// of a remote node that pulled pages the migrator had moved home back to
// where they came from (3300 of 16 384 in a guest run). So while it moves a
// process's pages, the migrator's thread runs on the CPUs of the nodes it
// moves them to: a page its touch moves goes home. Where the agent may not
// run there (its own cpuset), it runs where it is, as before.

// onLocalCPUs runs f on a thread allowed only the CPUs of nodes, when the
// kernel lets it; either way f runs.
func onLocalCPUs(sysfsRoot string, nodes []int, f func()) {
	set, err := nodesCPUs(sysfsRoot, nodes)
	if err != nil || set.Count() == 0 {
		f()
		return
	}
	runtime.LockOSThread()
	var old unix.CPUSet
	if unix.SchedGetaffinity(0, &old) != nil || unix.SchedSetaffinity(0, &set) != nil {
		runtime.UnlockOSThread()
		f()
		return
	}
	f()
	if unix.SchedSetaffinity(0, &old) == nil {
		runtime.UnlockOSThread()
	}
	// Else the thread keeps its narrower set and stays locked to this
	// goroutine, so that no other goroutine inherits it.
}

// nodesCPUs is the CPUs of nodes, from sysfs.
func nodesCPUs(sysfsRoot string, nodes []int) (unix.CPUSet, error) {
	var set unix.CPUSet
	for _, n := range nodes {
		cpus, err := topology.ReadNodeCPUs(sysfsRoot, n)
		if err != nil {
			return set, err
		}
		for _, c := range cpus.UnsortedList() {
			set.Set(c) // a CPU beyond the set's 1024 is left out
		}
	}
	return set, nil
}
