package doctor

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/kubelet"
)

const kubeletHeader = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

func TestKubeletChecks(t *testing.T) {
	cfg := func(extra string) tree {
		return hostV2().with("kubelet/config.yaml", kubeletHeader+"cgroupDriver: systemd\n"+extra)
	}
	runCases(t, []checkCase{
		{"default", "kubelet-cpu-manager", hostV2(), OK, []string{"cpuManagerPolicy: none"}},
		{"static", "kubelet-cpu-manager", cfg("cpuManagerPolicy: static\n"), OK, []string{"keeps off those CPUs", "cpu_manager_state"}},
		{"unknown", "kubelet-cpu-manager", cfg("cpuManagerPolicy: dynamic\n"), Warn,
			[]string{"config.yaml: cpuManagerPolicy: \"dynamic\" is not one of [none static]"}},
		{"json", "kubelet-cpu-manager", hostV2().with("kubelet/config.yaml",
			`{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","cpuManagerPolicy":"static"}`), OK, []string{"static"}},
		{"no kubelet", "kubelet-cpu-manager", hostV2().with("kubelet", gone), NA, []string{"no kubelet here"}},
		{"config elsewhere", "kubelet-cpu-manager", hostV2().with("kubelet/config.yaml", gone, "kubelet/pods", dir), Warn,
			[]string{"config.yaml: absent", "--kubelet-config"}},
		{"foreign kind", "kubelet-cpu-manager", hostV2().with("kubelet/config.yaml", "kind: Pod\n"), Warn, []string{"config.yaml: kind \"Pod\""}},
		{"no apiVersion", "kubelet-cpu-manager", hostV2().with("kubelet/config.yaml", "kind: KubeletConfiguration\ncpuManagerPolicy: static\n"), Warn,
			[]string{"config.yaml: kind \"KubeletConfiguration\", apiVersion \"\": want KubeletConfiguration, kubelet.config.k8s.io/v1beta1"}},
		{"old apiVersion", "kubelet-cpu-manager", hostV2().with("kubelet/config.yaml", "apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n"), Warn,
			[]string{"config.yaml: ", "apiVersion \"kubelet.config.k8s.io/v1alpha1\""}},
		{"not yaml", "kubelet-cpu-manager", hostV2().with("kubelet/config.yaml", "{{{"), Warn, []string{"config.yaml: not a KubeletConfiguration"}},
		{"binary", "kubelet-cpu-manager", hostV2().with("kubelet/config.yaml", "\x00\x01"), Warn, []string{"config.yaml: binary"}},
		{"huge", "kubelet-cpu-manager", hostV2().with("kubelet/config.yaml", strings.Repeat("#", 2<<20)), Warn, []string{"config.yaml: longer than"}},
		{"policy with spaces", "kubelet-cpu-manager", cfg("cpuManagerPolicy: \"a b\"\n"), Warn, []string{"cpuManagerPolicy: \"a b\" is not one of"}},

		{"none", "kubelet-memory-manager", hostV2(), OK, []string{"memoryManagerPolicy: None"}},
		{"static", "kubelet-memory-manager", cfg("memoryManagerPolicy: Static\n"), OK, []string{"leaves those pods' cpuset.mems alone", "memory_manager_state", "counts their memory as taken"}},
		{"unknown", "kubelet-memory-manager", cfg("memoryManagerPolicy: static\n"), Warn, []string{"memoryManagerPolicy: \"static\" is not one of"}},
		// A value the kubelet refuses makes the whole file one it would
		// not start on: every kubelet check says so.
		{"other field refused", "kubelet-memory-manager", cfg("cpuManagerPolicy: dynamic\n"), Warn, []string{"cpuManagerPolicy: \"dynamic\""}},

		{"none", "kubelet-topology-manager", hostV2(), OK, []string{"topologyManagerPolicy: none, scope: container"}},
		{"single-numa-node", "kubelet-topology-manager", cfg("topologyManagerPolicy: single-numa-node\ntopologyManagerScope: pod\n"), OK,
			[]string{"scope: pod", "refuses pods"}},
		{"best-effort", "kubelet-topology-manager", cfg("topologyManagerPolicy: best-effort\n"), OK, []string{"sees none of Locus's"}},
		{"unknown", "kubelet-topology-manager", cfg("topologyManagerPolicy: strict\n"), Warn, []string{"topologyManagerPolicy: \"strict\""}},

		{"none", "kubelet-reserved-cpus", hostV2(), OK, []string{"no reservedSystemCPUs"}},
		{"set", "kubelet-reserved-cpus", cfg("reservedSystemCPUs: \"0,4\"\n"), OK, []string{"reservedSystemCPUs: 0,4", "--reserved-cpus"}},
		{"huge", "kubelet-reserved-cpus", cfg("reservedSystemCPUs: 0-9223372036854775807\n"), Warn,
			[]string{"reservedSystemCPUs: invalid cpu list \"0-9223372036854775807\""}},

		{"systemd", "kubelet-cgroup-driver", hostV2(), OK, []string{"cgroupDriver: systemd"}},
		{"cgroupfs v1", "kubelet-cgroup-driver", hostV1(), OK, []string{"cgroupDriver: cgroupfs"}},
		{"mismatch", "kubelet-cgroup-driver", hostV1().with("kubelet/config.yaml", kubeletHeader+"cgroupDriver: systemd\n"), Warn,
			[]string{"the cgroupfs driver's layout"}},
		{"unknown", "kubelet-cgroup-driver", cfg("cgroupDriver: openrc\n"), Warn, []string{"cgroupDriver: \"openrc\""}},
	})
}

// kubelet.ParseConfig refuses every policy the kubelet refuses today, so a
// policy Locus does not know reaches the judges only once pkg/kubelet
// accepts a new one: they still say so.
func TestKubeletUnknownPolicies(t *testing.T) {
	env := hostV2().write(t)
	c, err := kubelet.ParseConfig([]byte(kubeletHeader))
	if err != nil {
		t.Fatal(err)
	}
	for want, judge := range map[string]func(Env, kubelet.Config) Result{
		"cpuManagerPolicy: new: a policy Locus does not know":    func(e Env, c kubelet.Config) Result { c.CPUManagerPolicy = "new"; return cpuManager(e, c) },
		"memoryManagerPolicy: New: a policy Locus does not know": func(e Env, c kubelet.Config) Result { c.MemoryManagerPolicy = "New"; return memoryManager(e, c) },
		"topologyManagerPolicy: new, scope: container: a policy": func(e Env, c kubelet.Config) Result { c.TopologyManagerPolicy = "new"; return topologyManager(e, c) },
		"cgroupDriver: new: not systemd or cgroupfs":             func(e Env, c kubelet.Config) Result { c.CgroupDriver = "new"; return cgroupDriver(e, c) },
	} {
		if r := judge(env, c); r.Status != Warn || !strings.Contains(r.Found, want) {
			t.Errorf("got %s %q, want warn %q", r.Status, r.Found, want)
		}
	}
}

func TestKubeletCheckpoints(t *testing.T) {
	static := hostV2().with("kubelet/cpu_manager_state", checkpoint("cpu_static"), "kubelet/memory_manager_state", checkpoint("memory_static"))
	corrupt := strings.Replace(checkpoint("cpu_static"), "5,12-13", "5,12-14", 1)
	runCases(t, []checkCase{
		{"none", "kubelet-checkpoints", hostV2(), OK,
			[]string{"cpu_manager_state: policy none, no exclusive CPUs; memory_manager_state: policy None"}},
		{"static", "kubelet-checkpoints", static, OK,
			[]string{"cpu_manager_state: policy static, exclusive CPUs 2-5,10-13: the agent keeps off them",
				"memory_manager_state: policy Static, its assignments hold node 0 hugepages-1Gi 1.0GiB, memory 2.0GiB: the agent places pinned workloads' memory around them"}},
		{"static, nothing pinned", "kubelet-checkpoints", static.with("kubelet/cpu_manager_state", checkpoint("cpu_static_empty")), OK,
			[]string{"policy static, no exclusive CPUs"}},
		{"v1 by container ID", "kubelet-checkpoints", static.with("kubelet/cpu_manager_state", checkpoint("cpu_v1")), OK,
			[]string{"exclusive CPUs 2-3"}},
		{"memory only", "kubelet-checkpoints", static.with("kubelet/cpu_manager_state", gone), OK,
			[]string{"cpu_manager_state: absent: no CPU is the kubelet's", "memory_manager_state: policy Static"}},
		{"cpu only", "kubelet-checkpoints", static.with("kubelet/memory_manager_state", gone), OK,
			[]string{"exclusive CPUs 2-5,10-13", "memory_manager_state: absent"}},
		{"absent", "kubelet-checkpoints", hostV2().with("kubelet/cpu_manager_state", gone, "kubelet/memory_manager_state", gone), NA,
			[]string{"no CPU or memory manager checkpoint in "}},
		{"no kubelet", "kubelet-checkpoints", hostV2().with("kubelet", gone), NA, []string{"no kubelet here"}},
		{"cpu corrupt", "kubelet-checkpoints", static.with("kubelet/cpu_manager_state", corrupt), Warn,
			[]string{"kubelet/cpu_manager_state: checksum", "takes every CPU as the kubelet's", "pins no pod", "memory_manager_state: policy Static",
				"refuses to start"}},
		{"cpu truncated", "kubelet-checkpoints", static.with("kubelet/cpu_manager_state", corrupt[:40]), Warn,
			[]string{"kubelet/cpu_manager_state: not a CPU manager checkpoint", "takes every CPU as the kubelet's"}},
		{"cpu a pipe", "kubelet-checkpoints", static.with("kubelet/cpu_manager_state", fifo), Warn,
			[]string{"kubelet/cpu_manager_state: not a regular file"}},
		{"memory corrupt", "kubelet-checkpoints", static.with("kubelet/memory_manager_state", strings.Replace(checkpoint("memory_static"), "17179869184", "17179869185", 1)), Warn,
			[]string{"kubelet/memory_manager_state: checksum", "goes on without it", "exclusive CPUs 2-5,10-13"}},
		{"both bad", "kubelet-checkpoints", static.with("kubelet/cpu_manager_state", "\x00", "kubelet/memory_manager_state", dir), Warn,
			[]string{"kubelet/cpu_manager_state: not a CPU manager checkpoint", "kubelet/memory_manager_state: not a regular file"}},
		// A checksum of 0 is accepted unchecked, as the kubelet accepts
		// it: whatever policy such a file names is shown quoted.
		{"odd policy", "kubelet-checkpoints", static.with("kubelet/cpu_manager_state", `{"policyName":"a\nb","defaultCpuSet":"","checksum":0}`), OK,
			[]string{`policy "a\nb", no exclusive CPUs`}},
		{"empty policy", "kubelet-checkpoints", static.with("kubelet/cpu_manager_state", "{}"), OK, []string{`policy "", no exclusive CPUs`}},
		// The config is the other checks': its errors are not this one's.
		{"config bad", "kubelet-checkpoints", static.with("kubelet/config.yaml", "kind: Pod\n"), OK, []string{"policy static"}},
		{"config elsewhere", "kubelet-checkpoints", static.with("kubelet/config.yaml", gone), OK, []string{"policy static"}},
	})
}
