package doctor

import (
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tree is a host as files: a path relative to the fixture's top (sys/...,
// proc/..., cgroup/..., kubelet/..., nri.sock) and its content. Three
// contents are special: dir makes a directory, socket a listening unix
// socket, fifo a named pipe; gone leaves the path out.
type tree map[string]string

const (
	dir    = "<dir>"
	socket = "<socket>"
	fifo   = "<fifo>"
	gone   = "<gone>"
)

// with returns a copy of t with pairs of path, content set.
func (t tree) with(kv ...string) tree {
	out := maps.Clone(t)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == gone {
			for p := range out {
				if p == kv[i] || strings.HasPrefix(p, kv[i]+"/") {
					delete(out, p)
				}
			}
			continue
		}
		out[kv[i]] = kv[i+1]
	}
	return out
}

// write makes the tree under a new directory and returns the Env reading it.
func (t tree) write(tb testing.TB) Env {
	tb.Helper()
	top := tb.TempDir()
	for p, content := range t {
		path := filepath.Join(top, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		var err error
		switch content {
		case dir:
			err = os.MkdirAll(path, 0o755)
		case fifo:
			err = syscall.Mkfifo(path, 0o644)
		case socket:
			var l net.Listener
			if l, err = net.Listen("unix", path); err == nil {
				tb.Cleanup(func() { l.Close() })
			}
		default:
			err = os.WriteFile(path, []byte(content), 0o644)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	return envAt(top)
}

func envAt(top string) Env {
	return Env{SysfsRoot: top + "/sys", ProcRoot: top + "/proc", CgroupRoot: top + "/cgroup",
		KubeletDir: top + "/kubelet", NRISocket: top + "/nri.sock", BinRoot: top + "/root",
		Self: top + "/root/usr/local/bin/locus"}.WithDefaults()
}

// hostV2 is a healthy two-node cgroup v2 Kubernetes node.
func hostV2() tree {
	return tree{
		"cgroup/cgroup.controllers":                "cpuset cpu io memory hugetlb pids",
		"cgroup/cgroup.subtree_control":            "cpuset cpu io memory pids",
		"cgroup/kubepods.slice/cgroup.controllers": "cpuset cpu io memory pids",
		"cgroup/kubepods.slice/memory.min":         "0\n",
		"cgroup/kubepods.slice/memory.low":         "0\n",
		"cgroup/kubepods.slice/memory.high":        "max\n",

		"sys/devices/system/node/online":             "0-1\n",
		"sys/devices/system/node/has_memory":         "0-1\n",
		"sys/devices/system/cpu/online":              "0-7\n",
		"sys/devices/system/cpu/offline":             "\n",
		"sys/devices/system/cpu/smt/control":         "on\n",
		"sys/kernel/mm/ksm/run":                      "0\n",
		"sys/kernel/mm/ksm/merge_across_nodes":       "1\n",
		"sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never\n",
		"sys/kernel/mm/transparent_hugepage/defrag":  "always defer defer+madvise [madvise] never\n",
		"proc/sys/kernel/numa_balancing":             "0\n",
		"proc/sys/vm/min_free_kbytes":                "67584\n",
		"proc/sys/vm/watermark_scale_factor":         "10\n",
		"proc/meminfo":                               "MemTotal:       32768000 kB\nMemFree:  1000 kB\n",
		"proc/cmdline":                               "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n",
		"proc/self/status":                           "Name:\tlocus\nUid:\t0\t0\t0\t0\nCapEff:\t000001ffffffffff\n",
		"kubelet/config.yaml":                        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n",
		"kubelet/cpu_manager_state":                  checkpoint("cpu_none"),
		"kubelet/memory_manager_state":               checkpoint("memory_none"),
		"nri.sock":                                   socket,
	}
}

// checkpoint is one of pkg/kubelet's checkpoint fixtures, written by the
// kubelet's own state packages (the bench module checks they still are).
func checkpoint(name string) string {
	b, err := os.ReadFile(filepath.Join("..", "kubelet", "testdata", "checkpoints", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// hostV1 is the same node on upstream cgroup v1 (no memory.min/low/high),
// with the cgroupfs driver's kubepods.
func hostV1() tree {
	return hostV2().with(
		"cgroup/cgroup.controllers", gone, "cgroup/cgroup.subtree_control", gone, "cgroup/kubepods.slice", gone,
		"cgroup/cpuset/cpuset.cpus", "0-7\n", "cgroup/cpuset/kubepods", dir,
		"cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n", "cgroup/memory/kubepods/memory.limit_in_bytes", "9223372036854771712\n",
		"cgroup/cpu/cpu.shares", "1024\n",
		"proc/cgroups", "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\t1\ncpu\t1\t1\t1\nmemory\t4\t90\t1\n",
		"kubelet/config.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: cgroupfs\n",
	)
}

// alibabaV1 is hostV1 with the Alibaba Cloud Linux memcg files.
func alibabaV1() tree {
	t := hostV1()
	for _, f := range []string{"memory.min", "memory.low", "memory.high", "memory.wmark_ratio", "memory.wmark_scale_factor", "memory.wmark_min_adj"} {
		t["cgroup/memory/kubepods/"+f] = "0\n"
	}
	return t
}

// runCheck runs the check named name on t.
func runCheck(tb testing.TB, t tree, name string) Result {
	tb.Helper()
	env := t.write(tb)
	for _, c := range Checks() {
		if c.Name == name {
			return runOne(c, env)
		}
	}
	tb.Fatalf("no check %q", name)
	return Result{}
}
