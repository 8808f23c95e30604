package cgroup

import (
	"fmt"
	"strings"
	"testing"
)

// TestCPUBurst writes the burst buffer on v1 (cpu.cfs_burst_us) and v2
// (cpu.max.burst) and restores it, reports it unsupported, naming Linux
// 5.14, where the kernel lacks it, and reads the throttle counter and quota
// CPU Burst decides on.
func TestCPUBurst(t *testing.T) {
	for _, tc := range []struct {
		v          Version
		has        bool
		file, stat string // relative to the root
		quota      string // the quota file's text
		wantQuota  int64
	}{
		{V1, true, "cpu/pod/cpu.cfs_burst_us", "cpu/pod/cpu.stat", "50000", 50000},
		{V1, false, "cpu/pod/cpu.cfs_burst_us", "cpu/pod/cpu.stat", "-1", -1},
		{V2, true, "pod/cpu.max.burst", "pod/cpu.stat", "50000 100000", 50000},
		{V2, false, "pod/cpu.max.burst", "pod/cpu.stat", "max 100000", -1},
	} {
		t.Run(fmt.Sprintf("%v-burst=%v", tc.v, tc.has), func(t *testing.T) {
			f := newFixture(t, tc.v, false)
			f.mkcg("pod")
			ctrl, quotaFile := Controller(""), "cpu.max"
			if tc.v == V1 {
				ctrl, quotaFile = CPU, "cpu.cfs_quota_us"
				if tc.has {
					f.set(CPU, "", "cpu.cfs_burst_us", "0")
				}
			}
			if tc.has {
				f.set(ctrl, "pod", strings.TrimPrefix(tc.file[strings.LastIndex(tc.file, "/"):], "/"), "0")
			}
			f.set(ctrl, "pod", "cpu.stat", "nr_periods 10\nnr_throttled 7\nthrottled_time 5\n")
			f.set(ctrl, "pod", quotaFile, tc.quota)
			h, err := Open(f.root, tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.KernelHas(CPUBurst); got != tc.has {
				t.Fatalf("KernelHas(cpu burst) = %v, want %v", got, tc.has)
			}
			if n, q, err := h.Throttling("pod"); err != nil || n != 7 || q != tc.wantQuota {
				t.Errorf("Throttling = %d, %d, %v; want 7, %d", n, q, err, tc.wantQuota)
			}
			w, _ := f.writer(NewMemoryStore())
			rep, err := w.Apply([]Op{{Cgroup: "pod", Knob: CPUBurst, Value: "30000"}})
			if err != nil {
				t.Fatal(err)
			}
			if r := rep.Results[0]; !tc.has {
				if r.Outcome != Unsupported || !strings.Contains(r.Reason, "5.14") {
					t.Fatalf("without the file: %s %q; want unsupported naming 5.14", r.Outcome, r.Reason)
				}
				return
			} else if r.Outcome != Written || f.get("", "", tc.file) != "30000" {
				t.Fatalf("outcome %s, file %q; want written 30000", r.Outcome, f.get("", "", tc.file))
			}
			if _, err := w.Restore([]Target{{Cgroup: "pod", Knob: CPUBurst}}); err != nil || f.get("", "", tc.file) != "0" {
				t.Errorf("restored %q, %v; want 0", f.get("", "", tc.file), err)
			}
		})
	}
}

// TestSettle: an op marked Settle is written like any other and leaves no
// original behind, so that a later restore cannot write back a value older
// than the owner's own (the kubelet's quota after a resize).
func TestSettle(t *testing.T) {
	f := newFixture(t, V1, false)
	f.mkcg("pod")
	f.set(CPU, "pod", "cpu.cfs_quota_us", "100000")
	store := NewMemoryStore()
	w, _ := f.writer(store)
	if _, err := w.Apply([]Op{{Cgroup: "pod", Knob: CPUQuota, Value: "120000"}}); err != nil {
		t.Fatal(err)
	}
	if len(store.Keys()) != 1 {
		t.Fatalf("raise recorded %v, want the original", store.Keys())
	}
	f.set(CPU, "pod", "cpu.cfs_quota_us", "200000") // the owner resized it meanwhile
	if _, err := w.Apply([]Op{{Cgroup: "pod", Knob: CPUQuota, Value: "200000", Settle: true}}); err != nil {
		t.Fatal(err)
	}
	if keys := store.Keys(); len(keys) != 0 {
		t.Fatalf("settled, yet originals %v remain", keys)
	}
	rep, err := w.Restore([]Target{{Cgroup: "pod", Knob: CPUQuota}})
	if err != nil || rep.Results[0].Outcome != NoOriginal || f.get(CPU, "pod", "cpu.cfs_quota_us") != "200000" {
		t.Errorf("restore after settling: %+v, %v, file %s; want nothing written", rep.Results, err, f.get(CPU, "pod", "cpu.cfs_quota_us"))
	}
}
