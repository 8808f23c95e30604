package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// What this host's kubelet, containerd and runc really do, which the agent and
// hack/e2e-down.sh rely on; checked on every run so that a change of any of them
// is noticed here first.
func TestNodeFacts(t *testing.T) {
	n := need(t)
	ns := n.namespace(t, "facts")
	g := n.createPod(t, ns, podSpec{name: "guaranteed", cpu: "1", memory: "64Mi/64Mi"})
	b := n.createPod(t, ns, podSpec{name: "burstable", memory: "32Mi/64Mi"})
	g, b = n.waitRunning(t, ns, g.Name), n.waitRunning(t, ns, b.Name)

	// Layout: Guaranteed pods directly under kubepods, Burstable ones under
	// kubepods/burstable, containers named by ID; the same in every v1
	// controller, in the named systemd hierarchy and, as a twin, on the cgroup2
	// mount of this hybrid host.
	if g.Status.QOSClass != corev1.PodQOSGuaranteed || b.Status.QOSClass != corev1.PodQOSBurstable {
		t.Fatalf("QoS classes %s, %s", g.Status.QOSClass, b.Status.QOSClass)
	}
	for _, ctrl := range []string{"cpu", "cpuacct", "cpuset", "memory", "pids", "systemd", "unified"} {
		for _, p := range []*corev1.Pod{g, b} {
			if _, err := os.Stat(n.containerCgroup(t, p, "w", ctrl)); err != nil {
				t.Errorf("%s pod %s: %v", p.Status.QOSClass, p.Name, err)
			}
		}
	}

	// containerd sets memory.memsw.limit_in_bytes equal to the limit, so a
	// limit can only be raised after memsw, and memsw lowered after the limit.
	mem := n.containerCgroup(t, g, "w", "memory")
	limit, memsw := filepath.Join(mem, "memory.limit_in_bytes"), filepath.Join(mem, "memory.memsw.limit_in_bytes")
	if l, s := readFile(t, limit), readFile(t, memsw); l != "67108864" || s != l {
		t.Errorf("limit %s, memsw %s; want both 67108864", l, s)
	}
	if err := os.WriteFile(limit, []byte("134217728"), 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("raising the limit above memsw: %v, want EINVAL", err)
	}
	for _, w := range []struct{ file, value string }{
		{memsw, "134217728"}, {limit, "134217728"}, // up: memsw first
		{limit, "67108864"}, {memsw, "67108864"}, // down: the limit first
	} {
		if err := os.WriteFile(w.file, []byte(w.value), 0); err != nil {
			t.Errorf("write %s = %s: %v", w.file, w.value, err)
		}
	}
	if l, s := readFile(t, limit), readFile(t, memsw); l != "67108864" || s != l {
		t.Errorf("after the round trip: limit %s, memsw %s", l, s)
	}

	// restrict_oom_score_adj: the container's processes keep containerd's own
	// oom_score_adj, which the kubelet's -997 for a Guaranteed pod may not go
	// below without CAP_SYS_RESOURCE.
	own := readFile(t, "/proc/"+strconv.Itoa(n.pid(t, "containerd"))+"/oom_score_adj")
	for _, pid := range procs(t, n.containerCgroup(t, g, "w", "cpu")) {
		if got := readFile(t, "/proc/"+strconv.Itoa(pid)+"/oom_score_adj"); got != own {
			t.Errorf("pid %d oom_score_adj %s, want containerd's %s", pid, got, own)
		}
	}

	// Host paths the kubelet and the shims use whatever they are told, which
	// hack/e2e-down.sh removes; and the kubelet's root dir mounted onto itself.
	id := strings.TrimPrefix(g.Status.ContainerStatuses[0].ContainerID, "containerd://")
	logs, _ := filepath.Glob("/var/log/containers/*" + id + ".log")
	if len(logs) != 1 {
		t.Errorf("no /var/log/containers link for container %s", id)
	}
	for _, dir := range []string{"/var/lib/kubelet/device-plugins", "/run/containerd/s"} {
		if _, err := os.Stat(dir); err != nil {
			t.Error(err)
		}
	}
	mounts := readFile(t, "/proc/self/mountinfo")
	if !strings.Contains(mounts, " "+filepath.Join(n.dir, "kubelet", "root")+" ") {
		t.Errorf("the kubelet's root dir %s is not a mount point", filepath.Join(n.dir, "kubelet", "root"))
	}
}
