package cgroup

import (
	"fmt"
	"strings"
	"testing"
)

// TestCPUIdle writes cpu.idle where the kernel has it and restores it, and
// reports it unsupported, with the kernel that added it, where it does not;
// KernelHas tells the two apart before anything is written.
func TestCPUIdle(t *testing.T) {
	for _, tc := range []struct {
		v       Version
		has     bool
		file    string // the file as the fixture reads it, relative to the root
		control string // a sibling file of the same controller
	}{
		{V1, true, "cpu/pod/cpu.idle", "cpu/pod/cpu.shares"},
		{V1, false, "cpu/pod/cpu.idle", "cpu/pod/cpu.shares"},
		{V2, true, "pod/cpu.idle", "pod/cpu.weight"},
		{V2, false, "pod/cpu.idle", "pod/cpu.weight"},
	} {
		t.Run(fmt.Sprintf("%v-idle=%v", tc.v, tc.has), func(t *testing.T) {
			f := newFixture(t, tc.v, false)
			f.mkcg("pod")
			ctrl := Controller("")
			if tc.v == V1 {
				ctrl = CPU
				if tc.has {
					f.set(CPU, "", "cpu.idle", "0")
				}
			}
			if tc.has {
				f.set(ctrl, "pod", "cpu.idle", "0")
			}
			h, err := Open(f.root, tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.KernelHas(CPUIdle); got != tc.has {
				t.Fatalf("KernelHas(cpu.idle) = %v, want %v", got, tc.has)
			}
			w, rec := f.writer(NewMemoryStore())
			rep, err := w.Apply([]Op{{Cgroup: "pod", Knob: CPUIdle, Value: "1"}})
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Results[0]
			if !tc.has {
				if r.Outcome != Unsupported || !strings.Contains(r.Reason, "5.15") || rec.count() != 0 {
					t.Fatalf("without the file: %s %q, %d writes; want unsupported naming 5.15 and no write", r.Outcome, r.Reason, rec.count())
				}
				if _, err := h.ReadKnob("pod", CPUIdle); err == nil || !strings.Contains(err.Error(), ErrUnsupported.Error()) {
					t.Errorf("ReadKnob without the file: %v, want ErrUnsupported", err)
				}
				return
			}
			if r.Outcome != Written || f.get("", "", tc.file) != "1" {
				t.Fatalf("outcome %s, file %q; want written 1", r.Outcome, f.get("", "", tc.file))
			}
			if _, err := w.Apply([]Op{{Cgroup: "pod", Knob: CPUIdle, Value: "2"}}); err == nil || !strings.Contains(err.Error(), `cpu.idle: value "2"`) {
				t.Errorf("cpu.idle 2: %v, want an error naming knob and value", err)
			}
			if _, err := w.Restore([]Target{{Cgroup: "pod", Knob: CPUIdle}}); err != nil {
				t.Fatal(err)
			}
			if got := f.get("", "", tc.file); got != "0" {
				t.Errorf("restored cpu.idle = %q, want 0", got)
			}
			if got := f.get("", "", tc.control); got == "" {
				t.Errorf("%s missing", tc.control)
			}
		})
	}
}

// TestCPUIdleKeepsTheWeight: leaving cpu.idle 1 makes the kernel set the
// weight to 1024, whatever it was (as the fixture mimics here). The writer
// records the weight's original with cpu.idle's, and a restore of both puts
// cpu.idle back first and then the weight.
func TestCPUIdleKeepsTheWeight(t *testing.T) {
	for _, v := range []Version{V1, V2} {
		t.Run(v.String(), func(t *testing.T) {
			f := newFixture(t, v, false)
			f.mkcg("pod")
			ctrl, weight, kubelet, reset := Controller(""), "cpu.weight", "1", "100"
			if v == V1 {
				ctrl, weight, kubelet, reset = CPU, "cpu.shares", "2", "1024"
			}
			f.set(ctrl, "pod", "cpu.idle", "0")
			f.set(ctrl, "pod", weight, kubelet) // a BestEffort pod's weight
			w, _ := f.writer(NewMemoryStore())
			write := w.write
			w.write = func(path, value string) error {
				if strings.HasSuffix(path, "/cpu.idle") {
					idle := map[string]string{"1": "3", "0": reset}[value]
					if v == V2 && value == "1" {
						idle = "1"
					}
					f.set(ctrl, "pod", weight, idle)
				}
				return write(path, value)
			}
			if _, err := w.Apply([]Op{{Cgroup: "pod", Knob: CPUIdle, Value: "1"}}); err != nil {
				t.Fatal(err)
			}
			rep, err := w.Restore([]Target{{Cgroup: "pod", Knob: CPUShares}, {Cgroup: "pod", Knob: CPUIdle}})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.get(ctrl, "pod", weight); got != kubelet {
				t.Errorf("%s = %s after restoring, want the original %s", weight, got, kubelet)
			}
			if got := f.get(ctrl, "pod", "cpu.idle"); got != "0" {
				t.Errorf("cpu.idle = %s after restoring", got)
			}
			if n := len(rep.Writes); n != 2 || !strings.HasSuffix(rep.Writes[0].Path, "cpu.idle") {
				t.Errorf("writes %v, want cpu.idle then %s", rep.Writes, weight)
			}
		})
	}
}
