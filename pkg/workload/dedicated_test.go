package workload

import (
	"reflect"
	"strings"
	"testing"
)

const vmHead = "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- name: vm\n  match: {libvirtDomain: vm1}\n"

// A dedicated CPU policy needs exclusive CPUs to dedicate: without them
// the file is refused, naming the field, the value and the workload.
func TestDedicatedNeedsExclusiveCPUs(t *testing.T) {
	for _, tc := range []struct{ rest, want string }{
		{"  cpuPolicy: dedicated\n  resources: {limits: {cpu: \"8\"}}\n  annotations: {cpuset-scheduler: \"true\"}\n", ""},
		{"  cpuPolicy: shared\n", ""},
		{"  cpuPolicy: dedicated\n", `workloads[0].cpuPolicy: "dedicated" needs exclusive CPUs: annotation cpuset-scheduler "true" and an integer resources.limits.cpu (workload "vm")`},
		{"  cpuPolicy: dedicated\n  resources: {limits: {cpu: \"2500m\"}}\n  annotations: {cpuset-scheduler: \"true\"}\n", `workloads[0].cpuPolicy: "dedicated" needs exclusive CPUs`},
		{"  cpuPolicy: dedicated\n  resources: {limits: {cpu: \"8\"}}\n", `workloads[0].cpuPolicy: "dedicated" needs exclusive CPUs`},
	} {
		_, err := ParseConfig([]byte(vmHead + tc.rest))
		if (tc.want == "" && err != nil) || (tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want))) {
			t.Errorf("%q: %v, want %q", tc.rest, err, tc.want)
		}
	}
}

// The cgroups libvirt made below a dedicated domain's scope: the vCPUs'
// in vCPU order (vcpu10 after vcpu2) and the emulator's are pinned apart,
// and all stay the workload's (Unlisted); a shared domain's are only
// Unlisted, as are those of a tree missing parts.
func TestSetBelow(t *testing.T) {
	const sub = "machine.slice/s.scope/libvirt"
	below := []string{sub, sub + "/emulator", sub + "/vcpu0", sub + "/vcpu10", sub + "/vcpu2"}
	cfg, err := ParseConfig([]byte(vmHead + "  cpuPolicy: dedicated\n  resources: {limits: {cpu: \"8\"}}\n  annotations: {cpuset-scheduler: \"true\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	w := FromHostConfig(cfg.Host.Workloads[0], "machine.slice/s.scope").Plan
	w.SetBelow(below)
	want := &DedicatedThreads{VCPUs: []string{sub + "/vcpu0", sub + "/vcpu2", sub + "/vcpu10"}, Emulator: sub + "/emulator"}
	if !reflect.DeepEqual(w.Dedicated, want) || !reflect.DeepEqual(w.Unlisted, below) {
		t.Errorf("dedicated: %+v, unlisted %v; want %+v and all of below", w.Dedicated, w.Unlisted, want)
	}
	// libvirt's own layout: the threads right below the domain's cgroup.
	const own = "machine/qemu-3-vm.libvirt-qemu"
	w = FromHostConfig(cfg.Host.Workloads[0], own).Plan
	w.SetBelow([]string{own + "/emulator", own + "/vcpu1", own + "/vcpu0", "elsewhere/vcpu2"})
	want = &DedicatedThreads{VCPUs: []string{own + "/vcpu0", own + "/vcpu1"}, Emulator: own + "/emulator"}
	if !reflect.DeepEqual(w.Dedicated, want) {
		t.Errorf("libvirt's own layout: dedicated %+v, want %+v", w.Dedicated, want)
	}
	w.SetBelow([]string{sub, sub + "/vcpu0"})
	if w.Dedicated != nil {
		t.Errorf("no emulator: dedicated %+v, want none", w.Dedicated)
	}
	cfg, _ = ParseConfig([]byte(vmHead + "  resources: {limits: {cpu: \"8\"}}\n  annotations: {cpuset-scheduler: \"true\"}\n"))
	w = FromHostConfig(cfg.Host.Workloads[0], "machine.slice/s.scope").Plan
	if w.SetBelow(below); w.Dedicated != nil || !reflect.DeepEqual(w.Unlisted, below) {
		t.Errorf("shared: dedicated %+v, unlisted %v", w.Dedicated, w.Unlisted)
	}
}

// FuzzDedicatedConfig: whatever a dedicated domain's limits and opt-in
// say, a config is accepted only if the workload gets exclusive CPUs, and
// then its policy is read as dedicated.
func FuzzDedicatedConfig(f *testing.F) {
	for _, s := range []string{`"8"`, `"2500m"`, `"0"`, `"-1"`, `"1e3"`, `""`, `{}`, `[1]`, `"99999999999999999999"`} {
		f.Add(s, `"true"`)
		f.Add(s, `"false"`)
	}
	f.Fuzz(func(t *testing.T, cpu, optIn string) {
		raw := vmHead + "  cpuPolicy: dedicated\n  resources: {limits: {cpu: " + cpu + "}}\n  annotations: {cpuset-scheduler: " + optIn + "}\n"
		cfg, err := ParseConfig([]byte(raw))
		if err != nil {
			if strings.Contains(err.Error(), "cpuPolicy") && !strings.Contains(err.Error(), `workloads[0].cpuPolicy: "dedicated"`) {
				t.Fatalf("%q: the error does not name the field and its value: %v", raw, err)
			}
			return
		}
		w := FromHostConfig(cfg.Host.Workloads[0], "machine.slice/s.scope").Plan
		if !w.CPU.Exclusive || !w.dedicated {
			t.Fatalf("%q: accepted, need %+v, dedicated %v", raw, w.CPU, w.dedicated)
		}
	})
}
