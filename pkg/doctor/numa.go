package doctor

import (
	"fmt"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

func init() {
	register(Check{Name: "numa-nodes", Order: 40, Run: checkNUMANodes})
}

// onlineNodes reads the online NUMA nodes; ok=false (no error) when the
// kernel has no NUMA support and so no node directory.
func onlineNodes(env Env) (nodes cpuset.CPUSet, ok bool, err error) {
	path := env.sys("devices/system/node/online")
	s, err := readAttr(path)
	if isMissing(err) {
		return cpuset.New(), false, nil
	}
	if err != nil {
		return cpuset.New(), false, err
	}
	nodes, err = parseNodes(s)
	if err != nil {
		return cpuset.New(), false, &readErr{path: path, reason: err.Error()}
	}
	if nodes.Size() == 0 {
		return nodes, false, &readErr{path: path, reason: "no node online"}
	}
	return nodes, true, nil
}

// multiNode reports whether the host has more than one NUMA node; an
// unreadable node list counts as several, so settings are still checked.
func multiNode(env Env) bool {
	nodes, ok, err := onlineNodes(env)
	return err != nil || (ok && nodes.Size() > 1)
}

func checkNUMANodes(env Env) Result {
	nodes, ok, err := onlineNodes(env)
	if err != nil {
		return unreadable(Warn, err, "Locus discovers nodes from this file; check that sysfs is mounted at --sysfs-root")
	}
	if !ok {
		return Result{Status: NA, Found: "no " + env.sys("devices/system/node") + ": a kernel without NUMA; one node assumed"}
	}
	memPath := env.sys("devices/system/node/has_memory")
	s, err := readAttr(memPath)
	if isMissing(err) {
		return Result{Status: OK, Found: fmt.Sprintf("%d node(s) online: %s (this kernel does not say which have memory)", nodes.Size(), nodes)}
	}
	var withMem cpuset.CPUSet
	if err == nil {
		if withMem, err = parseNodes(s); err != nil {
			err = &readErr{path: memPath, reason: err.Error()}
		}
	}
	if err != nil {
		return unreadable(Warn, err, "check that sysfs is mounted at --sysfs-root")
	}
	found := fmt.Sprintf("%d node(s) online: %s; with memory online: %s", nodes.Size(), nodes, orNoneStr(withMem.String()))
	if without := nodes.Difference(withMem); without.Size() > 0 {
		return Result{Status: Warn, Found: found + "; without memory: " + without.String(),
			Do: "workloads on the CPUs of a node without memory take their memory from another node: online its memory (memory hotplug), or expect remote memory there"}
	}
	return Result{Status: OK, Found: found}
}

func orNoneStr(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// parseNodes reads a node list as a set (node ids fit a CPU set).
func parseNodes(s string) (cpuset.CPUSet, error) {
	ids, err := topology.ParseNodeList(s)
	return cpuset.New(ids...), err
}
