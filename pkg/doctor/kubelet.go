package doctor

import "github.com/locus-project/locus/pkg/kubelet"

func init() {
	register(Check{Name: "kubelet-cpu-manager", Order: 110, Run: kubeletCheck(cpuManager)})
	register(Check{Name: "kubelet-memory-manager", Order: 120, Run: kubeletCheck(memoryManager)})
	register(Check{Name: "kubelet-topology-manager", Order: 130, Run: kubeletCheck(topologyManager)})
	register(Check{Name: "kubelet-reserved-cpus", Order: 140, Run: kubeletCheck(reservedCPUs)})
	register(Check{Name: "kubelet-cgroup-driver", Order: 150, Run: kubeletCheck(cgroupDriver)})
}

// kubeletCheck runs judge on the kubelet's config, once it is read.
func kubeletCheck(judge func(Env, kubelet.Config) Result) func(Env) Result {
	return func(env Env) Result {
		c, found, err := readKubeletConfig(env)
		if err != nil {
			return unreadable(Warn, err, "cannot tell how the kubelet manages CPUs and memory")
		}
		if !found {
			return Result{Status: NA, Found: "no kubelet here (no " + env.KubeletConfig + ")"}
		}
		return judge(env, c)
	}
}

// readKubeletConfig reads env's kubelet config with the doctor's bounded,
// non-blocking reader and parses it with pkg/kubelet, the one parser of it:
// a value the kubelet would refuse is an error naming the field, and then
// every kubelet check warns, as the kubelet would not start on that file.
// found=false with no error: there is no kubelet here (neither the file nor
// its directory).
func readKubeletConfig(env Env) (c kubelet.Config, found bool, err error) {
	text, err := readText(env.KubeletConfig, kubelet.MaxConfigBytes)
	if isMissing(err) {
		if isDir(env.KubeletDir) {
			return c, false, &readErr{path: env.KubeletConfig, reason: "absent, though " + env.KubeletDir +
				" exists: the kubelet is configured elsewhere (give --kubelet-config) or by flags only"}
		}
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	c, err = kubelet.ParseConfig([]byte(text))
	if err != nil {
		return c, false, &readErr{path: env.KubeletConfig, reason: err.Error()}
	}
	return c, true, nil
}

// The judges below keep a branch for a policy Locus does not know although
// kubelet.ParseConfig refuses every value the kubelet refuses today: a
// kubelet that adds a policy is read as such the day pkg/kubelet accepts it.

func cpuManager(env Env, c kubelet.Config) Result {
	found := "cpuManagerPolicy: " + c.CPUManagerPolicy
	switch c.CPUManagerPolicy {
	case "none":
		return Result{Status: OK, Found: found + ": the kubelet leaves cpusets alone; Locus decides them"}
	case "static":
		return Result{Status: OK, Found: found + ": the kubelet pins Guaranteed pods with whole CPUs; the agent reads its " + env.KubeletDir + "/cpu_manager_state and keeps off those CPUs (its first CPU reconcile after a container starts may undo a Locus pin once, until the agent's next reconcile)"}
	}
	return Result{Status: Warn, Found: found + ": a policy Locus does not know"}
}

func memoryManager(env Env, c kubelet.Config) Result {
	found := "memoryManagerPolicy: " + c.MemoryManagerPolicy
	switch c.MemoryManagerPolicy {
	case "None":
		return Result{Status: OK, Found: found + ": the kubelet leaves cpuset.mems alone"}
	case "Static":
		return Result{Status: OK, Found: found + ": the kubelet binds Guaranteed pods' memory (cpuset.mems) to NUMA nodes it picks; the agent reads its " +
			env.KubeletDir + "/memory_manager_state, leaves those pods' cpuset.mems alone and counts their memory as taken when it places pinned workloads' memory"}
	}
	return Result{Status: Warn, Found: found + ": a policy Locus does not know"}
}

func topologyManager(_ Env, c kubelet.Config) Result {
	found := "topologyManagerPolicy: " + c.TopologyManagerPolicy + ", scope: " + c.TopologyManagerScope
	switch c.TopologyManagerPolicy {
	case "none":
		return Result{Status: OK, Found: found}
	case "best-effort", "restricted", "single-numa-node":
		note := ": it aligns the kubelet's own CPU, memory and device assignments, and sees none of Locus's"
		if c.TopologyManagerPolicy != "best-effort" {
			note += "; it refuses pods whose devices it cannot align, whatever Locus would have done"
		}
		return Result{Status: OK, Found: found + note}
	}
	return Result{Status: Warn, Found: found + ": a policy Locus does not know"}
}

func reservedCPUs(_ Env, c kubelet.Config) Result {
	if c.ReservedSystemCPUs.IsEmpty() {
		return Result{Status: OK, Found: "no reservedSystemCPUs"}
	}
	return Result{Status: OK, Found: "reservedSystemCPUs: " + c.ReservedSystemCPUs.String() + ": the agent keeps them off pods when --reserved-cpus is not given"}
}

func cgroupDriver(env Env, c kubelet.Config) Result {
	found := "cgroupDriver: " + c.CgroupDriver
	want := map[string]string{"systemd": "kubepods.slice", "cgroupfs": "kubepods"}[c.CgroupDriver]
	if want == "" {
		return Result{Status: Warn, Found: found + ": not systemd or cgroupfs"}
	}
	v, err := cgroupVersion(env)
	if err != nil {
		return Result{Status: OK, Found: found}
	}
	base := env.CgroupRoot
	if v == 1 {
		base = env.cgroup("cpuset")
	}
	for other, dir := range map[string]string{"systemd": "kubepods.slice", "cgroupfs": "kubepods"} {
		if dir != want && isDir(base+"/"+dir) && !isDir(base+"/"+want) {
			return Result{Status: Warn, Found: found + ", but the pods' cgroups are under " + base + "/" + dir + ", the " + other + " driver's layout",
				Do: "the agent's --cgroup-driver auto follows the cgroups; make the kubelet's config and its running flags agree"}
		}
	}
	return Result{Status: OK, Found: found + " (the agent's --cgroup-driver auto finds its layout)"}
}
