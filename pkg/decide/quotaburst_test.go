package decide

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/workload"
)

// cpuTimes are counters of every CPU of the test topology after ticks
// ticks, busyPercent of them busy.
func cpuTimes(ticks, busyPercent uint64) map[int]CPUTime {
	out := map[int]CPUTime{}
	for cpu := range 192 {
		out[cpu] = CPUTime{Busy: ticks * busyPercent / 100, Total: ticks}
	}
	return out
}

func quotaOps(r Ready) []string {
	var out []string
	for _, op := range r.Desired.Ops {
		if op.Knob == cgroupfile.CPUQuota {
			out = append(out, fmt.Sprintf("%s=%s%s", op.Cgroup[strings.LastIndex(op.Cgroup, "/")+1:], op.Value, map[bool]string{true: "(settle)"}[op.Settle]))
		}
	}
	for _, t := range r.Desired.Restores {
		if t.Knob == cgroupfile.CPUQuota {
			out = append(out, "restore "+t.Cgroup[strings.LastIndex(t.Cgroup, "/")+1:])
		}
	}
	return out
}

// TestDecideQuotaBurst walks a pod of two containers through reconciles:
// the raise needs a throttled container and an idle pool, rises a step a
// reconcile with the pod's quota ahead of its containers', steps down with
// the pod's after them when the pool is overloaded, and goes back to the
// base (settled, never a recorded original) when the policy is turned off;
// the raises are what the checkpoint saves.
func TestDecideQuotaBurst(t *testing.T) {
	w := burstPod("LS", 2000, 1000)
	obs := testObservation(w)
	obs.Config.CPUBurst = cpuburst.NodeConfig{Strategy: cpuburst.Config{Policy: new(cpuburst.CFSQuotaBurst)}, Source: "clusterStrategy"}
	for _, c := range w.Containers {
		obs.Prepared[c.Cgroup] = true
	}
	t0 := time.Unix(1000, 0)
	quota := map[string]int64{w.Containers[0].Cgroup: 200_000, w.Containers[1].Cgroup: 100_000}
	steps := []struct {
		name      string
		throttled [2]uint64
		busy      uint64 // percent of the pool busy since the last step
		off       bool
		want      []string
		save      bool
	}{
		{"first: nothing to compare, at the base", [2]uint64{3, 0}, 10, false, []string{"a=200000(settle)", "b=100000(settle)"}, false},
		{"a throttled, pool idle: pod first, then a up", [2]uint64{9, 0}, 10, false, []string{"podp=340000", "a=240000", "b=100000(settle)"}, true},
		{"not throttled: held", [2]uint64{9, 0}, 10, false, []string{"podp=340000", "a=240000", "b=100000(settle)"}, false},
		{"both throttled", [2]uint64{10, 4}, 10, false, []string{"podp=408000", "a=288000", "b=120000"}, true},
		{"pool overloaded: containers down, then the pod", [2]uint64{10, 4}, 90, false, []string{"a=230400", "b=100000(settle)", "podp=330400"}, true},
		{"policy off: back to the base, the pod restored", [2]uint64{11, 5}, 10, true, []string{"a=200000(settle)", "restore podp"}, true},
		{"off and at the base: nothing", [2]uint64{12, 6}, 10, true, nil, false},
	}
	var mem Memory
	for i, st := range steps {
		o := obs
		o.Workloads = []workload.Workload{w}
		if st.off {
			o.Workloads[0] = withBurst(w, &cpuburst.Config{Policy: new(cpuburst.None)}, "")
		}
		o.Burst = BurstObservation{Kernel: true, Now: t0.Add(time.Duration(i) * time.Second), Quota: quota, CPUTimes: cpuTimes(uint64(i+1)*1000, 0),
			Throttled: map[string]uint64{w.Containers[0].Cgroup: st.throttled[0], w.Containers[1].Cgroup: st.throttled[1]}}
		// Counters grow by 1000 ticks a step, busy% of them busy.
		prev := mem.Burst.CPUTimes
		for cpu, c := range o.Burst.CPUTimes {
			if p, ok := prev[cpu]; ok {
				o.Burst.CPUTimes[cpu] = CPUTime{Busy: p.Busy + 1000*st.busy/100, Total: c.Total}
			}
		}
		r := Decide(o, mem)
		if got := quotaOps(r); !slices.Equal(got, st.want) || r.Save != st.save {
			t.Fatalf("step %d (%s): %v save %v; want %v save %v\n%s", i, st.name, got, r.Save, st.want, st.save, r.Desired.Workloads[0].QuotaBurstWhy)
		}
		if len(st.want) > 0 && r.Desired.Workloads[0].QuotaBurstWhy == "" {
			t.Errorf("step %d: no status line", i)
		}
		mem = r.Memory
		// Raises held in memory are what the checkpoint keeps.
		for cg, raise := range mem.Burst.Raises {
			if !raise.Raised() {
				t.Errorf("step %d: %s kept at the base", i, cg)
			}
		}
	}
}

// TestQuotaBurstLeavesKubeletQuotas: a container whose quota the kubelet
// did not derive from its limit the way Locus does (another period), or
// with none, is left alone.
func TestQuotaBurstLeavesKubeletQuotas(t *testing.T) {
	w := burstPod("LS", 2000, 1000)
	obs := testObservation(w)
	obs.Config.CPUBurst = cpuburst.NodeConfig{Strategy: cpuburst.Config{Policy: new(cpuburst.Auto)}}
	obs.Burst = BurstObservation{Now: time.Unix(5, 0), Quota: map[string]int64{w.Containers[0].Cgroup: 100_000, w.Containers[1].Cgroup: -1},
		Throttled: map[string]uint64{w.Containers[0].Cgroup: 1, w.Containers[1].Cgroup: 1}}
	r := Decide(obs, Memory{})
	if got := quotaOps(r); len(got) != 0 {
		t.Fatalf("wrote %v", got)
	}
	why := r.Desired.Workloads[0].QuotaBurstWhy
	if !strings.Contains(why, "a: quota 100000us is not the 200000us") || !strings.Contains(why, "b: the kubelet set no CFS quota") {
		t.Errorf("status %q", why)
	}
}
