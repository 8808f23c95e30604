package decide

import (
	"slices"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	"github.com/locus-project/locus/pkg/cpuqos"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// TestComputeCPUQoS: the files CPU QoS writes and restores, per case. Never
// cpu.shares beside cpu.idle 1 (the kernel refuses it on an idle group).
func TestComputeCPUQoS(t *testing.T) {
	on := &cpuqos.ClassConfig{Enable: new(true)}
	cfg := cpuqos.Config{LS: on, BE: on}
	for _, tc := range []struct {
		name     string
		cfg      cpuqos.Config
		idle, be bool
		invalid  string
		ops      []string // knob=value on the workload's cgroup
		restores []cgroupfile.Knob
		problem  string
	}{
		{"BE idle", cfg, true, true, "", []string{"cpu.idle=1"}, nil, ""},
		{"BE lowest weight", cfg, false, true, "", []string{"cpu.shares=2"}, []cgroupfile.Knob{cgroupfile.CPUIdle}, ""},
		{"LS keeps", cfg, true, false, "", nil, []cgroupfile.Knob{cgroupfile.CPUIdle, cgroupfile.CPUShares}, ""},
		{"off", cpuqos.Config{}, true, true, "", nil, []cgroupfile.Knob{cgroupfile.CPUIdle, cgroupfile.CPUShares}, ""},
		{"invalid", cfg, true, true, "bad label", nil, nil, "InvalidCPUQOS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := testWorkload("w", 0, false, tc.be, nil)
			w.CPUQoS = cpuqos.Workload{Class: map[bool]string{true: "BE", false: "LS"}[tc.be]}
			w.CPUQoSInvalid = tc.invalid
			d := Compute(Input{Topology: fixture.MustBuild(fixture.Intel2S96C), Reserved: cpuset.New(), BEPool: cpuset.New(),
				Workloads: []workload.Workload{w}, CPUQoS: tc.cfg, CPUKernel: cpuqos.Kernel{CPUIdle: tc.idle}})
			var ops []string
			for _, op := range d.Ops {
				if op.Knob == cgroupfile.CPUIdle || op.Knob == cgroupfile.CPUShares {
					ops = append(ops, string(op.Knob)+"="+op.Value)
				}
			}
			var restores []cgroupfile.Knob
			for _, r := range d.Restores {
				if r.Knob == cgroupfile.CPUIdle || r.Knob == cgroupfile.CPUShares {
					if r.Cgroup != w.Cgroup {
						t.Errorf("restore outside the workload's cgroup: %+v", r)
					}
					restores = append(restores, r.Knob)
				}
			}
			if !slices.Equal(ops, tc.ops) || !slices.Equal(restores, tc.restores) {
				t.Errorf("ops %v restores %v; want %v %v", ops, restores, tc.ops, tc.restores)
			}
			got := ""
			for _, p := range d.Problems {
				got = p.Reason
			}
			if got != tc.problem {
				t.Errorf("problem %q, want %q", got, tc.problem)
			}
		})
	}
}
