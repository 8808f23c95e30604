package doctor

import (
	"fmt"
	"strings"
)

// The controllers Locus writes, with a file each has in its v1 mount.
var neededControllers = []struct{ name, v1File string }{
	{"cpuset", "cpuset.cpus"}, {"memory", "memory.limit_in_bytes"}, {"cpu", "cpu.shares"},
}

// workloadParents are where the kubelet puts pods (systemd and cgroupfs
// drivers); the first that exists is where the workloads live.
var workloadParents = []string{"kubepods.slice", "kubepods"}

func init() {
	register(Check{Name: "cgroup-version", Order: 10, Run: checkCgroupVersion})
	register(Check{Name: "cgroup-controllers", Order: 20, Run: checkControllers})
}

// cgroupVersion tells the hierarchy under the cgroup root by its files: a
// cgroup2 root has cgroup.controllers, a v1 root holds controller mounts.
// (Fixture trees are plain directories, so the filesystem type cannot tell.)
func cgroupVersion(env Env) (int, error) {
	if exists(env.cgroup("cgroup.controllers")) {
		return 2, nil
	}
	if isDir(env.cgroup("cpuset")) || isDir(env.cgroup("memory")) {
		return 1, nil
	}
	if !isDir(env.CgroupRoot) {
		return 0, &readErr{path: env.CgroupRoot, reason: "not a directory"}
	}
	return 0, &readErr{path: env.CgroupRoot, reason: "neither a cgroup2 mount (no cgroup.controllers) nor a directory of v1 cpuset or memory mounts"}
}

func checkCgroupVersion(env Env) Result {
	v, err := cgroupVersion(env)
	if err != nil {
		return unreadable(Fail, err, "mount cgroups there, or give --cgroup-root the directory where they are mounted")
	}
	if v == 2 {
		return Result{Status: OK, Found: "cgroup v2 (unified) at " + env.CgroupRoot}
	}
	found := "cgroup v1 at " + env.CgroupRoot
	if exists(env.cgroup("unified", "cgroup.controllers")) {
		found += " (hybrid: cgroup2 at unified/, the controllers Locus writes are v1)"
	}
	return Result{Status: OK, Found: found}
}

func checkControllers(env Env) Result {
	v, err := cgroupVersion(env)
	if err != nil {
		return Result{Status: NA, Found: "no cgroup hierarchy (see cgroup-version)"}
	}
	if v == 2 {
		return controllersV2(env)
	}
	return controllersV1(env)
}

func controllersV1(env Env) Result {
	enabled := map[string]bool{}
	procText, procErr := readText(env.proc("cgroups"), maxAttr)
	if procErr == nil {
		enabled = parseProcCgroups(procText)
	}
	var missing, found []string
	for _, c := range neededControllers {
		switch {
		case procErr == nil && !enabled[c.name]:
			missing = append(missing, c.name+" (disabled in "+env.proc("cgroups")+")")
		case !exists(env.cgroup(c.name, c.v1File)):
			missing = append(missing, c.name+" (no "+env.cgroup(c.name, c.v1File)+")")
		default:
			found = append(found, c.name)
		}
	}
	if len(missing) > 0 {
		return Result{Status: Fail, Found: "missing: " + strings.Join(missing, ", "),
			Do: "mount the missing v1 controllers under the cgroup root (and drop cgroup_disable= from the kernel command line)"}
	}
	r := Result{Status: OK, Found: strings.Join(found, ", ") + " mounted and enabled"}
	if procErr != nil {
		r.Status, r.Found = Warn, r.Found+"; cannot tell which are enabled: "+procErr.Error()
	}
	return r
}

func controllersV2(env Env) Result {
	// Where the workloads live: the kubelet's tree when there is one, else
	// the root's children (the root's subtree_control).
	var dirs [][2]string // {what, file}
	dirs = append(dirs, [2]string{"the root's children", env.cgroup("cgroup.subtree_control")})
	for _, p := range workloadParents {
		if isDir(env.cgroup(p)) {
			dirs = append(dirs, [2]string{p, env.cgroup(p, "cgroup.controllers")})
			break
		}
	}
	var problems []string
	for _, d := range dirs {
		text, err := readText(d[1], maxAttr)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		have := map[string]bool{}
		for _, c := range parseControllers(text) {
			have[c] = true
		}
		for _, c := range neededControllers {
			if !have[c.name] {
				problems = append(problems, fmt.Sprintf("%s not enabled for %s (%s)", c.name, d[0], d[1]))
			}
		}
	}
	if len(problems) > 0 {
		return Result{Status: Fail, Found: strings.Join(problems, "; "),
			Do: "enable them in the parents' cgroup.subtree_control (systemd: Delegate=yes; the kubelet enables them for its pods)"}
	}
	return Result{Status: OK, Found: "cpuset, memory, cpu enabled for " + dirs[len(dirs)-1][0]}
}

// parseControllers reads a cgroup2 controller list ("cpuset cpu io memory").
func parseControllers(s string) []string { return strings.Fields(s) }

// parseProcCgroups reads /proc/cgroups: a header line, then
// "name hierarchy num_cgroups enabled" per controller.
func parseProcCgroups(s string) map[string]bool {
	out := map[string]bool{}
	for line := range strings.SplitSeq(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || strings.HasPrefix(f[0], "#") {
			continue
		}
		out[f[0]] = f[3] == "1"
	}
	return out
}
