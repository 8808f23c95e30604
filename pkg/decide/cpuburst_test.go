package decide

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// burstPod is a pod of two containers with CPU limits (in millicores; 0:
// none) and a class.
func burstPod(class string, limits ...int64) workload.Workload {
	w := workload.Workload{Name: "ns/p", Cgroup: "kubepods/burstable/podp", CPUQoS: cpuqos.Workload{Class: class}}
	for i, l := range limits {
		name := string(rune('a' + i))
		w.Containers = append(w.Containers, workload.Container{Name: name, Cgroup: w.Cgroup + "/" + name, CPULimitMilli: l})
	}
	return w
}

func burstFiles(d Desired) (ops []string, restores []string) {
	for _, op := range d.Ops {
		if op.Knob == cgroupfile.CPUBurst {
			ops = append(ops, op.Cgroup+"="+op.Value)
		}
	}
	for _, r := range d.Restores {
		if r.Knob == cgroupfile.CPUBurst {
			restores = append(restores, r.Cgroup)
		}
	}
	return ops, restores
}

// TestComputeCPUBurst: the burst buffer of each container from its limit,
// the pod's their sum, restores where off, nothing on a kernel without
// the file, a problem and nothing written for bad text.
func TestComputeCPUBurst(t *testing.T) {
	auto := cpuburst.NodeConfig{Strategy: cpuburst.Config{Policy: new(cpuburst.Auto), CPUBurstPercent: new(int64(50))}, Source: "clusterStrategy"}
	none := new(cpuburst.Config{Policy: new(cpuburst.None)})
	const p, a, b = "kubepods/burstable/podp", "kubepods/burstable/podp/a", "kubepods/burstable/podp/b"
	for _, tc := range []struct {
		name     string
		cfg      cpuburst.NodeConfig
		w        workload.Workload
		kernel   bool
		ops      []string
		restores []string
		why      string
		problem  string
	}{
		{"two limits", auto, burstPod("LS", 2000, 1000), true, []string{a + "=100000", b + "=50000", p + "=150000"}, nil, "cpuBurstPercent 50", ""},
		{"1000 % is capped at each quota and the pod's", cpuburst.NodeConfig{Strategy: cpuburst.Config{Policy: new(cpuburst.CPUBurstOnly)}}, burstPod("LS", 2000, 1000), true,
			[]string{a + "=200000", b + "=100000", p + "=300000"}, nil, "policy cpuBurstOnly", ""},
		{"a container without limit", auto, burstPod("LS", 2000, 0), true, []string{a + "=100000", p + "=100000"}, []string{b}, "", ""},
		{"no limit at all", auto, burstPod("LS", 0), true, nil, []string{a, p}, "no container has a CPU limit", ""},
		{"policy none restores", cpuburst.NodeConfig{}, burstPod("LS", 2000), true, nil, []string{a, p}, "no burst buffer", ""},
		{"cfsQuotaBurstOnly has no buffer", cpuburst.NodeConfig{Strategy: cpuburst.Config{Policy: new(cpuburst.CFSQuotaBurst)}}, burstPod("LS", 2000), true, nil, []string{a, p}, "no burst buffer", ""},
		{"annotation none beats the node", auto, withBurst(burstPod("LS", 2000), none, ""), true, nil, []string{a, p}, "annotation over clusterStrategy", ""},
		{"BE never", auto, burstPod("BE", 2000), true, nil, []string{a, p}, "BE never bursts", ""},
		{"LSR never", auto, burstPod("LSR", 2000), true, nil, []string{a, p}, "holds CPUs of its own", ""},
		{"kernel without the file", auto, burstPod("LS", 2000), false, nil, nil, "the kernel has no cpu.cfs_burst_us", ""},
		{"bad annotation", auto, withBurst(burstPod("LS", 2000), nil, "annotation koordinator.sh/cpuBurst.policy: \"x\" is not one of"), true, nil, nil, "invalid", "InvalidCPUBurst"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compute(Input{Topology: fixture.MustBuild(fixture.Intel2S96C), Reserved: cpuset.New(), BEPool: cpuset.New(),
				Workloads: []workload.Workload{tc.w}, CPUBurst: tc.cfg, BurstKernel: tc.kernel})
			ops, restores := burstFiles(d)
			if !slices.Equal(ops, tc.ops) || !slices.Equal(restores, tc.restores) {
				t.Errorf("ops %v restores %v; want %v %v", ops, restores, tc.ops, tc.restores)
			}
			if why := d.Workloads[0].CPUBurstWhy; !strings.Contains(why, tc.why) {
				t.Errorf("why %q, want %q", why, tc.why)
			}
			got := ""
			for _, p := range d.Problems {
				if strings.Contains(p.Reason, "Burst") {
					got = p.Reason
				}
			}
			if got != tc.problem {
				t.Errorf("problem %q, want %q", got, tc.problem)
			}
		})
	}
}

func withBurst(w workload.Workload, c *cpuburst.Config, invalid string) workload.Workload {
	w.CPUBurst, w.CPUBurstInvalid = c, invalid
	return w
}
