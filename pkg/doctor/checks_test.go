package doctor

import (
	"strings"
	"testing"
)

// checkCase is one check on one fixture host: the status it must give and
// words its found (or what to do) must hold.
type checkCase struct {
	name  string
	check string
	host  tree
	want  Status
	words []string
}

func runCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.check+"/"+c.name, func(t *testing.T) {
			r := runCheck(t, c.host, c.check)
			if r.Check != c.check || r.Status != c.want {
				t.Fatalf("got %s %s: %s (do: %s), want %s", r.Check, r.Status, r.Found, r.Do, c.want)
			}
			for _, w := range c.words {
				if !strings.Contains(r.Found+" "+r.Do, w) {
					t.Errorf("%q not in found %q / do %q", w, r.Found, r.Do)
				}
			}
		})
	}
}

func TestCgroupChecks(t *testing.T) {
	v2, v1 := hostV2(), hostV1()
	runCases(t, []checkCase{
		{"v2", "cgroup-version", v2, OK, []string{"cgroup v2"}},
		{"v1", "cgroup-version", v1, OK, []string{"cgroup v1"}},
		{"hybrid", "cgroup-version", v1.with("cgroup/unified/cgroup.controllers", ""), OK, []string{"hybrid"}},
		{"empty root", "cgroup-version", tree{"cgroup": dir}, Fail, []string{"cgroup", "neither a cgroup2 mount"}},
		{"no root", "cgroup-version", tree{}, Fail, []string{"cgroup: not a directory"}},

		{"v2 enabled", "cgroup-controllers", v2, OK, []string{"kubepods.slice"}},
		{"v2 no kubepods", "cgroup-controllers", v2.with("cgroup/kubepods.slice", gone), OK, []string{"root's children"}},
		{"v2 cpuset not delegated", "cgroup-controllers", v2.with("cgroup/cgroup.subtree_control", "cpu memory"), Fail,
			[]string{"cpuset not enabled for the root's children", "cgroup.subtree_control"}},
		{"v2 memory missing in kubepods", "cgroup-controllers", v2.with("cgroup/kubepods.slice/cgroup.controllers", "cpuset cpu"), Fail,
			[]string{"memory not enabled for kubepods.slice"}},
		{"v2 subtree_control binary", "cgroup-controllers", v2.with("cgroup/cgroup.subtree_control", "\x00\xff"), Fail,
			[]string{"cgroup.subtree_control: binary content"}},
		{"v1 mounted", "cgroup-controllers", v1, OK, []string{"cpuset, memory, cpu mounted and enabled"}},
		{"v1 memory disabled", "cgroup-controllers", v1.with("proc/cgroups", "#h\ncpuset 3 1 1\ncpu 1 1 1\nmemory 4 1 0\n"), Fail,
			[]string{"memory (disabled in", "cgroup_disable="}},
		{"v1 cpu not mounted", "cgroup-controllers", v1.with("cgroup/cpu", gone), Fail, []string{"cpu (no ", "cpu.shares"}},
		{"v1 /proc/cgroups unreadable", "cgroup-controllers", v1.with("proc/cgroups", fifo), Warn,
			[]string{"proc/cgroups: not a regular file"}},
		{"none", "cgroup-controllers", tree{"cgroup": dir}, NA, nil},
	})
}

func TestMemoryQoSFiles(t *testing.T) {
	runCases(t, []checkCase{
		{"v2", "memory-qos-files", hostV2(), OK, []string{"memory.min, memory.low, memory.high", "skipped, no Alibaba"}},
		{"v2 other child", "memory-qos-files", hostV2().with("cgroup/kubepods.slice", gone,
			"cgroup/init.scope/memory.min", "0", "cgroup/init.scope/memory.low", "0", "cgroup/init.scope/memory.high", "max"), OK, nil},
		{"v1 upstream", "memory-qos-files", hostV1(), Warn, []string{"present: none", "skipped: memory.min, memory.low, memory.high", "--memory-v1-soft-limit"}},
		{"v1 alibaba", "memory-qos-files", alibabaV1(), OK, []string{"memory.wmark_ratio", "memory.wmark_min_adj"}},
		{"v1 no memory mount", "memory-qos-files", hostV1().with("cgroup/memory", gone), Fail, []string{"no memory cgroup"}},
		{"v2 without memory files", "memory-qos-files", hostV2().with("cgroup/kubepods.slice/memory.low", gone), Warn,
			[]string{"skipped: memory.low"}},
	})
}

func TestNUMAChecks(t *testing.T) {
	one := hostV2().with("sys/devices/system/node/online", "0", "sys/devices/system/node/has_memory", "0")
	runCases(t, []checkCase{
		{"two nodes", "numa-nodes", hostV2(), OK, []string{"2 node(s) online: 0-1; with memory online: 0-1"}},
		{"memoryless node", "numa-nodes", hostV2().with("sys/devices/system/node/has_memory", "0"), Warn, []string{"without memory: 1"}},
		{"no NUMA", "numa-nodes", hostV2().with("sys/devices/system/node", gone), NA, []string{"one node assumed"}},
		{"no has_memory", "numa-nodes", hostV2().with("sys/devices/system/node/has_memory", gone), OK, []string{"does not say"}},
		{"garbage", "numa-nodes", hostV2().with("sys/devices/system/node/online", "zero"), Warn, []string{"node/online:"}},
		{"huge range", "numa-nodes", hostV2().with("sys/devices/system/node/online", "0-9223372036854775807"), Warn, []string{"node/online:"}},
		{"truncated", "numa-nodes", hostV2().with("sys/devices/system/node/online", ""), Warn, []string{"node/online: empty"}},

		{"off", "numa-balancing", hostV2(), OK, []string{"= 0 (off)"}},
		{"on, two nodes", "numa-balancing", hostV2().with("proc/sys/kernel/numa_balancing", "1"), Warn,
			[]string{"moves tasks and pages", "kernel.numa_balancing=0"}},
		{"on, one node", "numa-balancing", one.with("proc/sys/kernel/numa_balancing", "1"), OK, []string{"nothing to move"}},
		{"tiering mode", "numa-balancing", hostV2().with("proc/sys/kernel/numa_balancing", "2"), Warn, nil},
		{"absent", "numa-balancing", hostV2().with("proc/sys/kernel/numa_balancing", gone), NA, nil},
		{"foreign", "numa-balancing", hostV2().with("proc/sys/kernel/numa_balancing", "yes"), Warn, []string{"numa_balancing: \"yes\" is not an integer"}},
		{"unknown mode", "numa-balancing", hostV2().with("proc/sys/kernel/numa_balancing", "7"), Warn, []string{"not a known mode"}},
	})
}

func TestMemorySettingChecks(t *testing.T) {
	ksmOn := hostV2().with("sys/kernel/mm/ksm/run", "1")
	one := hostV2().with("sys/devices/system/node/online", "0", "sys/devices/system/node/has_memory", "0")
	adj := hostV2().with("cgroup/kubepods.slice/memory.wmark_min_adj", "0")
	runCases(t, []checkCase{
		{"off", "ksm-merge-across-nodes", hostV2(), OK, []string{"not merging"}},
		{"absent", "ksm-merge-across-nodes", hostV2().with("sys/kernel/mm/ksm", gone), NA, nil},
		{"across nodes", "ksm-merge-across-nodes", ksmOn, Warn, []string{"merge_across_nodes = 1", "write 0 to"}},
		{"within nodes", "ksm-merge-across-nodes", ksmOn.with("sys/kernel/mm/ksm/merge_across_nodes", "0"), OK, nil},
		{"one node", "ksm-merge-across-nodes", one.with("sys/kernel/mm/ksm/run", "1"), OK, []string{"one NUMA node"}},
		{"truncated", "ksm-merge-across-nodes", hostV2().with("sys/kernel/mm/ksm/run", ""), Warn, []string{"ksm/run: empty"}},
		{"huge", "ksm-merge-across-nodes", ksmOn.with("sys/kernel/mm/ksm/merge_across_nodes", strings.Repeat("1", 1<<17)), Warn,
			[]string{"merge_across_nodes: longer than"}},

		{"madvise", "transparent-hugepages", hostV2(), OK, []string{"enabled = madvise, defrag = madvise"}},
		{"always", "transparent-hugepages", hostV2().with("sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never"), OK, []string{"asked for or not"}},
		{"never", "transparent-hugepages", hostV2().with("sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]"), OK, nil},
		{"absent", "transparent-hugepages", hostV2().with("sys/kernel/mm/transparent_hugepage", gone), NA, nil},
		{"no selection", "transparent-hugepages", hostV2().with("sys/kernel/mm/transparent_hugepage/enabled", "always madvise never"), Warn,
			[]string{"enabled: \"always madvise never\" names no mode"}},
		{"unknown mode", "transparent-hugepages", hostV2().with("sys/kernel/mm/transparent_hugepage/enabled", "[sometimes]"), Warn, nil},

		{"no wmark_min_adj", "vm-watermarks", hostV2(), NA, []string{"vm.min_free_kbytes = 67584 (0.2 % of 32000 MiB)", "watermark_scale_factor = 10"}},
		{"wmark_min_adj", "vm-watermarks", adj, OK, []string{"memory.wmark_min_adj moves", "raise it"}},
		{"alibaba v1", "vm-watermarks", alibabaV1(), OK, nil},
		{"foreign", "vm-watermarks", adj.with("proc/sys/vm/min_free_kbytes", "lots"), Warn, []string{"min_free_kbytes: \"lots\""}},
		{"absent", "vm-watermarks", adj.with("proc/sys/vm/min_free_kbytes", gone), NA, nil},
		{"no meminfo", "vm-watermarks", adj.with("proc/meminfo", "\x00"), Warn, []string{"meminfo: binary"}},
		{"no scale factor", "vm-watermarks", adj.with("proc/sys/vm/watermark_scale_factor", gone), OK, nil},
		{"bad defrag", "transparent-hugepages", hostV2().with("sys/kernel/mm/transparent_hugepage/defrag", "x"), Warn, []string{"defrag:"}},
	})
}

func TestCPUChecks(t *testing.T) {
	runCases(t, []checkCase{
		{"all online", "smt-and-offline-cpus", hostV2(), OK, []string{"online CPUs 0-7", "SMT on", "none offline"}},
		{"offline", "smt-and-offline-cpus", hostV2().with("sys/devices/system/cpu/offline", "4-7\n", "sys/devices/system/cpu/online", "0-3"), Warn,
			[]string{"offline: 4-7"}},
		{"smt off", "smt-and-offline-cpus", hostV2().with("sys/devices/system/cpu/smt/control", "forceoff"), OK, []string{"one thread per core"}},
		{"no smt control", "smt-and-offline-cpus", hostV2().with("sys/devices/system/cpu/smt", gone), OK, []string{"does not say"}},
		{"smt binary", "smt-and-offline-cpus", hostV2().with("sys/devices/system/cpu/smt/control", "\xff"), Warn, []string{"smt/control: binary"}},
		{"no online", "smt-and-offline-cpus", hostV2().with("sys/devices/system/cpu/online", gone), Fail, []string{"cpu/online:"}},
		{"huge online", "smt-and-offline-cpus", hostV2().with("sys/devices/system/cpu/online", "0-9223372036854775807"), Fail, []string{"cpu/online:"}},
		{"bad offline", "smt-and-offline-cpus", hostV2().with("sys/devices/system/cpu/offline", "x"), Warn, []string{"cpu/offline:"}},

		{"none", "isolated-cpus", hostV2(), OK, []string{"no isolcpus="}},
		{"isolcpus", "isolated-cpus", hostV2().with("proc/cmdline", "ro isolcpus=domain,managed_irq,2-3 quiet"), Warn,
			[]string{"isolcpus=2-3", "out of every pool"}},
		{"nohz_full", "isolated-cpus", hostV2().with("proc/cmdline", "ro nohz_full=1-7"), OK, []string{"nohz_full=1-7"}},
		{"last wins", "isolated-cpus", hostV2().with("proc/cmdline", "isolcpus=1 isolcpus=5"), Warn, []string{"isolcpus=5 "}},
		{"init args", "isolated-cpus", hostV2().with("proc/cmdline", "ro -- isolcpus=1"), OK, nil},
		{"huge list", "isolated-cpus", hostV2().with("proc/cmdline", "isolcpus=0-9223372036854775807"), Warn, []string{"cmdline: isolcpus=:"}},
		{"unreadable", "isolated-cpus", hostV2().with("proc/cmdline", dir), Warn, []string{"cmdline: not a regular file"}},
	})
}

func TestRuntimeAndPrivilegeChecks(t *testing.T) {
	runCases(t, []checkCase{
		{"socket", "runtime-nri", hostV2(), OK, []string{"exposes NRI at"}},
		{"absent", "runtime-nri", hostV2().with("nri.sock", gone), NA, []string{"no NRI socket"}},
		{"regular file", "runtime-nri", hostV2().with("nri.sock", "x"), Warn, []string{"nri.sock is not a socket"}},

		{"root", "page-migration-permission", hostV2(), OK, []string{"root with CAP_SYS_NICE"}},
		{"user", "page-migration-permission", hostV2().with("proc/self/status", "Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\n"), Warn,
			[]string{"uid 1000 without CAP_SYS_NICE", "EPERM"}},
		{"user with cap", "page-migration-permission", hostV2().with("proc/self/status", "Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000800000\n"), OK, nil},
		{"root without cap", "page-migration-permission", hostV2().with("proc/self/status", "Uid:\t0\t0\t0\t0\nCapEff:\t0000000000000000\n"), Warn,
			[]string{"root without CAP_SYS_NICE"}},
		{"foreign", "page-migration-permission", hostV2().with("proc/self/status", "hello"), Warn, []string{"self/status: no Uid or CapEff"}},
		{"bad mask", "page-migration-permission", hostV2().with("proc/self/status", "Uid:\t0\t0\nCapEff:\tzz\n"), Warn, []string{"CapEff"}},
	})
}
