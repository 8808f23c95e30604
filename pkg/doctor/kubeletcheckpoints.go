package doctor

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/topology"
)

func init() {
	register(Check{Name: "kubelet-checkpoints", Order: 155, Run: checkKubeletCheckpoints})
}

// checkKubeletCheckpoints reads the CPU and memory manager checkpoints
// through kubelet.Read, as the agent reads them at every reconcile, and says
// what the agent makes of them.
func checkKubeletCheckpoints(env Env) Result {
	if !isDir(env.KubeletDir) {
		return Result{Status: NA, Found: "no kubelet here (no " + env.KubeletDir + ")"}
	}
	cpuPath := filepath.Join(env.KubeletDir, kubelet.CPUManagerFile)
	memPath := filepath.Join(env.KubeletDir, kubelet.MemoryManagerFile)
	s := kubelet.Read(kubelet.Paths{Dir: env.KubeletDir, Config: env.KubeletConfig})
	// Read reads the config too; its errors are the other kubelet checks'.
	bad := map[string]string{}
	for _, e := range s.Errors {
		if e.Path == cpuPath || e.Path == memPath {
			bad[e.Path] = e.String()
		}
	}
	if s.CPU == nil && s.Memory == nil && len(bad) == 0 {
		return Result{Status: NA, Found: "no CPU or memory manager checkpoint in " + env.KubeletDir + ": the kubelet has not written one"}
	}

	var found, warns []string
	switch {
	case bad[cpuPath] != "":
		warns = append(warns, bad[cpuPath]+": the agent takes every CPU as the kubelet's while it stays so: it pins no pod (pods it pinned are released) and writes no cpuset; memory QoS goes on")
	case s.CPU != nil:
		found = append(found, kubelet.CPUManagerFile+": "+cpuCheckpoint(*s.CPU))
	default:
		found = append(found, kubelet.CPUManagerFile+": absent: no CPU is the kubelet's")
	}
	switch {
	case bad[memPath] != "":
		warns = append(warns, bad[memPath]+": the agent goes on without it")
	case s.Memory != nil:
		found = append(found, kubelet.MemoryManagerFile+": "+memCheckpoint(*s.Memory))
	default:
		found = append(found, kubelet.MemoryManagerFile+": absent")
	}
	if len(warns) == 0 {
		return Result{Status: OK, Found: strings.Join(found, "; ")}
	}
	do := "the kubelet refuses to start on a checkpoint it cannot read: drain the node, stop the kubelet, remove the file, start it"
	return Result{Status: Warn, Found: strings.Join(append(warns, found...), "; "), Do: do}
}

// cpuCheckpoint is the CPU manager's policy and the CPUs it holds.
func cpuCheckpoint(c kubelet.CPUManager) string {
	out := "policy " + policyName(c.Policy)
	if ex := c.Exclusive(); !ex.IsEmpty() {
		return out + ", exclusive CPUs " + ex.String() + ": the agent keeps off them"
	}
	return out + ", no exclusive CPUs"
}

// memCheckpoint is the memory manager's policy and, with the Static
// policy, what its assignments hold on each node, which the agent takes
// from the memory it places pinned workloads in.
func memCheckpoint(m kubelet.MemoryManager) string {
	out := "policy " + policyName(m.Policy)
	if !strings.EqualFold(m.Policy, "Static") {
		return out
	}
	var nodes []string
	for _, id := range slices.Sorted(maps.Keys(m.Assigned)) {
		var kinds []string
		for _, res := range slices.Sorted(maps.Keys(m.Assigned[id])) {
			kinds = append(kinds, policyName(res)+" "+strings.ReplaceAll(topology.HumanBytes(m.Assigned[id][res]), " ", ""))
		}
		nodes = append(nodes, fmt.Sprintf("node %d %s", id, strings.Join(kinds, ", ")))
	}
	if len(nodes) == 0 {
		return out + ", no memory assigned"
	}
	return out + ", its assignments hold " + strings.Join(nodes, "; ") + ": the agent places pinned workloads' memory around them"
}

// policyName shows a checkpoint's policy: as it is when it is a plain word
// (the kubelet's are), else quoted, since the file may hold any text.
func policyName(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return topology.Quote(s)
		}
	}
	if s == "" {
		return topology.Quote(s)
	}
	return s
}
