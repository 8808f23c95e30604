package doctor

import (
	"os"
	"strings"

	"github.com/locus-project/locus/pkg/cgroup"
)

// The memory QoS knobs Locus writes: the core ones, then the Alibaba Cloud
// Linux / Anolis extensions.
var (
	coreMemKnobs = []cgroup.Knob{cgroup.MemoryMin, cgroup.MemoryLow, cgroup.MemoryHigh}
	extMemKnobs  = []cgroup.Knob{cgroup.MemoryWmarkRatio, cgroup.MemoryWmarkScale, cgroup.MemoryWmarkMinAdj}
)

// maxChildren bounds how many entries of a cgroup directory are looked at
// when searching a child cgroup to probe.
const maxChildren = 256

func init() {
	register(Check{Name: "memory-qos-files", Order: 30, Run: checkMemQoSFiles})
}

// memoryDirs are the cgroups whose memory files tell what the kernel
// offers: the kubelet's tree or another child cgroup (the root cgroup lacks
// memory.min/low/high), and the memory root itself.
func memoryDirs(env Env, v int) []string {
	root := env.CgroupRoot
	if v == 1 {
		root = env.cgroup("memory")
	}
	dirs := []string{}
	for _, p := range []string{workloadParents[0], workloadParents[1], "system.slice"} {
		if isDir(root + "/" + p) {
			dirs = append(dirs, root+"/"+p)
		}
	}
	if len(dirs) == 0 {
		if d := anyChild(root); d != "" {
			dirs = append(dirs, d)
		}
	}
	return append(dirs, root)
}

// anyChild is a child directory of dir, or "" (bounded: maxChildren entries).
func anyChild(dir string) string {
	f, err := os.Open(dir)
	if err != nil {
		return ""
	}
	defer f.Close()
	ents, _ := f.ReadDir(maxChildren)
	for _, e := range ents {
		if e.IsDir() {
			return dir + "/" + e.Name()
		}
	}
	return ""
}

// memKnobsPresent says, per knob, whether its file exists in any of the
// probed cgroups.
func memKnobsPresent(env Env) (map[cgroup.Knob]bool, []string, bool) {
	v, err := cgroupVersion(env)
	if err != nil {
		return nil, nil, false
	}
	ver := cgroup.V1
	if v == 2 {
		ver = cgroup.V2
	}
	dirs := memoryDirs(env, v)
	have := map[cgroup.Knob]bool{}
	for _, k := range append(append([]cgroup.Knob{}, coreMemKnobs...), extMemKnobs...) {
		spec, _ := cgroup.Lookup(k)
		p := spec.Placement(ver)
		if p == nil {
			continue
		}
		for _, d := range dirs {
			if exists(d + "/" + p.File) {
				have[k] = true
				break
			}
		}
	}
	return have, dirs, v == 1
}

func checkMemQoSFiles(env Env) Result {
	have, dirs, v1 := memKnobsPresent(env)
	if have == nil {
		return Result{Status: NA, Found: "no cgroup hierarchy (see cgroup-version)"}
	}
	if !isDir(dirs[len(dirs)-1]) {
		return Result{Status: Fail, Found: "no memory cgroup at " + dirs[len(dirs)-1],
			Do: "mount the memory controller (see cgroup-controllers)"}
	}
	var present, skipped, extSkipped []string
	for _, k := range coreMemKnobs {
		if have[k] {
			present = append(present, string(k))
		} else {
			skipped = append(skipped, string(k))
		}
	}
	for _, k := range extMemKnobs {
		if have[k] {
			present = append(present, string(k))
		} else {
			extSkipped = append(extSkipped, string(k))
		}
	}
	found := "present: " + orNone(present)
	if len(skipped) > 0 {
		found += "; skipped: " + strings.Join(skipped, ", ")
	}
	if len(extSkipped) > 0 {
		found += "; skipped, no Alibaba Cloud Linux / Anolis memcg extensions: " + strings.Join(extSkipped, ", ")
	}
	if len(skipped) == 0 {
		return Result{Status: OK, Found: found}
	}
	do := "memory QoS sets only what exists; for memory.min/low/high use cgroup v2 or a kernel with them"
	if v1 {
		do = "upstream cgroup v1 has no memory.min/low/high: the agent's --memory-v1-soft-limit approximates memory.low with memory.soft_limit_in_bytes; cgroup v2 or Alibaba Cloud Linux / Anolis has them all"
	}
	return Result{Status: Warn, Found: found + " (looked in " + strings.Join(dirs, ", ") + ")", Do: do}
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
