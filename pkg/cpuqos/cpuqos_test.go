package cpuqos

import (
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestCompute(t *testing.T) {
	on := func(id *int64, idle *int64) *ClassConfig {
		return &ClassConfig{Enable: ptr(true), GroupIdentity: id, SchedIdle: idle}
	}
	withIdle, noIdle := Kernel{CPUIdle: true}, Kernel{}
	for _, tc := range []struct {
		name   string
		cfg    Config
		w      Workload
		k      Kernel
		idle   bool
		shares int64
		on     bool
		why    string
	}{
		{"nothing configured", Config{}, Workload{Class: ClassBE}, withIdle, false, 0, false, "no clusterStrategy.beClass.cpuQOS"},
		{"BE enable false", Config{BE: &ClassConfig{Enable: ptr(false), GroupIdentity: ptr[int64](-1)}}, Workload{Class: ClassBE}, withIdle, false, 0, false, "beClass.cpuQOS.enable is not true"},
		{"BE enable unset", Config{BE: &ClassConfig{GroupIdentity: ptr[int64](-1)}}, Workload{Class: ClassBE}, withIdle, false, 0, false, "enable is not true"},
		{"BE enable alone: default -1, idle", Config{BE: on(nil, nil)}, Workload{Class: ClassBE}, withIdle, true, 0, true, "groupIdentity -1"},
		{"BE -1 without cpu.idle: lowest weight", Config{BE: on(ptr[int64](-1), nil)}, Workload{Class: ClassBE}, noIdle, false, 2, true, "lowest weight"},
		{"BE identity 0: plain", Config{BE: on(ptr[int64](0), nil)}, Workload{Class: ClassBE}, withIdle, false, 0, true, "keeps its weight"},
		{"BE identity 0 schedIdle 1", Config{BE: on(ptr[int64](0), ptr[int64](1))}, Workload{Class: ClassBE}, withIdle, true, 0, true, "schedIdle 1"},
		{"LS 2 keeps", Config{LS: on(ptr[int64](2), nil), BE: on(nil, nil)}, Workload{Class: ClassLS}, withIdle, false, 0, true, "lsClass.cpuQOS: groupIdentity 2"},
		{"LS -1 demotes as asked", Config{LS: on(ptr[int64](-1), nil)}, Workload{Class: ClassLS}, noIdle, false, 2, true, "lsClass"},
		{"LSR without its section reads lsClass", Config{LS: on(ptr[int64](-1), nil)}, Workload{Class: ClassLSR}, withIdle, true, 0, true, "lsClass"},
		{"LSE reads lsrClass", Config{LSR: on(ptr[int64](2), nil), LS: on(ptr[int64](-1), nil)}, Workload{Class: ClassLSE}, withIdle, false, 0, true, "lsrClass"},
		{"SYSTEM reads systemClass", Config{System: on(nil, nil), LS: on(ptr[int64](-1), nil)}, Workload{Class: ClassSystem}, withIdle, false, 0, true, "systemClass.cpuQOS: groupIdentity 0"},
		{"BE config does not touch LS", Config{BE: on(nil, nil)}, Workload{Class: ClassLS}, withIdle, false, 0, false, "no clusterStrategy.lsClass.cpuQOS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compute(tc.cfg, tc.w, tc.k)
			if d.Idle != tc.idle || d.Shares != tc.shares || d.Enabled != tc.on || !strings.Contains(d.Reason, tc.why) {
				t.Errorf("got idle %v shares %d on %v (%s); want idle %v shares %d on %v (%s)",
					d.Idle, d.Shares, d.Enabled, d.Reason, tc.idle, tc.shares, tc.on, tc.why)
			}
			if d.Idle && d.Shares != 0 {
				t.Error("cpu.idle and cpu.shares both written: the kernel refuses shares on an idle group")
			}
		})
	}
}

func TestCoreIsolation(t *testing.T) {
	expel := Config{LS: &ClassConfig{Enable: ptr(true), CoreExpeller: ptr(true)},
		BE: &ClassConfig{Enable: ptr(true), CoreExpeller: ptr(true)}}
	off := Config{LS: &ClassConfig{Enable: ptr(false), CoreExpeller: ptr(true)}}
	for _, tc := range []struct {
		name string
		cfg  Config
		w    Workload
		want bool
		why  string
	}{
		{"not asked", Config{}, Workload{Class: ClassLS}, false, "not asked for"},
		{"annotation", Config{}, Workload{Class: ClassLS, CoreIsolation: ptr(true)}, true, "annotation"},
		{"class coreExpeller", expel, Workload{Class: ClassLS}, true, "lsClass.cpuQOS.coreExpeller"},
		{"annotation false beats the class", expel, Workload{Class: ClassLSR, CoreIsolation: ptr(false)}, false, "is false"},
		{"class off", off, Workload{Class: ClassLS}, false, "not asked for"},
		{"never BE, even asked", expel, Workload{Class: ClassBE, CoreIsolation: ptr(true)}, false, "BE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compute(tc.cfg, tc.w, Kernel{CPUIdle: true})
			if d.CoreIsolation != tc.want || !strings.Contains(d.CoreReason, tc.why) {
				t.Errorf("got %v (%s), want %v (%s)", d.CoreIsolation, d.CoreReason, tc.want, tc.why)
			}
		})
	}
}
