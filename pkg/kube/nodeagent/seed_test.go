package nodeagent_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

var layouts = []struct {
	name    string
	v       cgroup.Version
	systemd bool
}{
	{"cgroupfs-v1", cgroup.V1, false},
	{"cgroupfs-v2", cgroup.V2, false},
	{"systemd-v1", cgroup.V1, true},
	{"systemd-v2", cgroup.V2, true},
}

// The seeds' manifests, applied unchanged: the ack-slo ConfigMaps (memory QoS
// on for LS and BE), the memory QoS demo's redis (LS, policy auto) and
// stress (BE, policy auto) pods, and the CPU binding demo's redis
// (cpuset-scheduler, limits.cpu 4). On every cgroup layout the agent finds
// their cgroups, writes the seed's formulas into them, binds redis to four
// CPUs of one NUMA node, posts events on the pods and publishes the node's
// topology.
func TestSeedManifestsOnEveryLayout(t *testing.T) {
	agentConfig(t)
	cp.ApplyFile(t, "../../../internal/kubetest/testdata/ack-slo-config.yaml")
	cp.ApplyFile(t, "../../../internal/kubetest/testdata/ack-slo-pod-config.yaml")
	for i, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			n := newNode(t, l.v, l.systemd)
			files := []string{"testdata/redis-demo.yaml", "testdata/stress-demo.yaml", "testdata/redis-cpuset.yaml"}
			var pods map[string]*corev1.Pod
			if i == 0 {
				pods = n.apply(files) // everything, Services too (a NodePort can be taken once)
			} else {
				pods = n.apply(files, "Pod", "ConfigMap")
			}
			n.start()
			checkSeedPods(t, n, pods)
		})
	}
}

func checkSeedPods(t *testing.T, n *node, pods map[string]*corev1.Pod) {
	k := n.kubelet
	redisDemo, stress, redis := pods["redis-demo"], pods["stress-demo"], pods["redis"]
	demo := k.ContainerCgroup(redisDemo, "redis")

	// Memory QoS, policy auto on an LS pod: the recommended parameters, so
	// min, low and throttling stay off and only the watermarks are set.
	n.waitFile(demo, "memory.low", "0")
	unlimited := "max" // as the kubelet leaves it: v1's Anolis file spells it as a number
	if k.v == cgroup.V1 {
		unlimited = "9223372036854771712"
	}
	n.waitFile(demo, "memory.high", unlimited)
	if got := k.File(demo, "memory.min"); got != "0" {
		t.Errorf("redis-demo memory.min = %s, want 0 (minLimitPercent is off)", got)
	}
	n.waitFile(k.PodCgroup(redisDemo), "memory.low", "0")
	if n.kubelet.v == cgroup.V1 { // the Anolis files exist only in this fixture's v1 tree
		n.waitFile(demo, "memory.wmark_ratio", "95")
		n.waitFile(demo, "memory.wmark_min_adj", "-25")
		n.waitFile(k.ContainerCgroup(stress, "stress"), "memory.wmark_min_adj", "50")
	} else {
		waitEvent(t, "default", "Node", n.name, corev1.EventTypeWarning, "KnobUnsupported", "memory.wmark_ratio")
	}

	// CPU binding: four CPUs of one NUMA node, whole cores, none reserved;
	// cpuset.mems follows. The shared pool is the rest.
	rc := k.ContainerCgroup(redis, "redis")
	got := n.waitFileMatch(rc, "cpuset.cpus", "4 CPUs", func(s string) bool {
		c, err := cpuset.Parse(s)
		return err == nil && c.Size() == 4
	})
	cpus, _ := cpuset.Parse(got)
	node := -1
	for _, c := range cpus.List() {
		nd := 0
		if c%8 >= 4 {
			nd = 1
		}
		if node >= 0 && nd != node {
			t.Fatalf("redis CPUs %s span NUMA nodes", cpus)
		}
		node = nd
		if reserved.Contains(c) || !cpus.Contains(c^8) { // thread siblings are c and c^8 here
			t.Fatalf("redis CPUs %s: reserved or not whole cores", cpus)
		}
	}
	n.waitFile(rc, "cpuset.mems", map[int]string{0: "0", 1: "1"}[node])
	shared := cpuset.New(machine16()...).Difference(reserved).Difference(cpus).String()
	n.waitFile(demo, "cpuset.cpus", shared)
	n.waitFile(k.ContainerCgroup(stress, "stress"), "cpuset.cpus", shared)

	// Events on the pods, from locus.
	waitEvent(t, n.ns, "Pod", "redis", corev1.EventTypeNormal, "CPUsAssigned", "bound to CPUs "+cpus.String())
	if n.kubelet.v == cgroup.V1 {
		waitEvent(t, n.ns, "Pod", "redis-demo", corev1.EventTypeNormal, "CgroupUpdated", "memory.wmark_ratio=95")
	}

	// The NodeResourceTopology: redis's CPUs are taken on its zone.
	waitNRT(t, n.name, "showing redis", func(o *nrt.Object, ct nrt.CPUTopology) bool {
		if ct.Exclusive[n.ns+"/redis"] != cpus.String() || len(o.Zones) != 2 {
			return false
		}
		for _, r := range o.Zones[node].Resources {
			if r.Name == "cpu" && r.Available.Value() == int64(8-4-2*(1-node)) {
				return true
			}
		}
		return false
	})

	// locus status: the pods by namespace/name.
	st := n.status()
	for _, name := range []string{"redis", "redis-demo", "stress-demo"} {
		w, ok := findWorkload(st, n.ns+"/"+name)
		if !ok || w.Source != "pod" {
			t.Fatalf("status has no pod workload %s/%s: %+v", n.ns, name, st.Workloads)
		}
	}
	if w, _ := findWorkload(st, n.ns+"/redis"); w.Pool != "exclusive" || w.CPUs != cpus.String() {
		t.Errorf("status of redis: pool %s cpus %s", w.Pool, w.CPUs)
	}
	if w, _ := findWorkload(st, n.ns+"/stress-demo"); w.Pool != "be" || !strings.EqualFold(w.QOSClass, "BE") {
		t.Errorf("status of stress-demo: pool %s class %s", w.Pool, w.QOSClass)
	}
}

func machine16() []int {
	out := make([]int, 16)
	for i := range out {
		out[i] = i
	}
	return out
}
