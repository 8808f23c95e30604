package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/doctor"
	"github.com/locus-project/locus/pkg/topology"
)

// doctorHost writes a healthy cgroup v2 two-node host, with files changed
// or added by extra (path, content pairs), and returns the root flags.
func doctorHost(t *testing.T, extra ...string) []string {
	t.Helper()
	top := t.TempDir()
	files := map[string]string{
		"cgroup/cgroup.controllers": "cpuset cpu memory", "cgroup/cgroup.subtree_control": "cpuset cpu memory",
		"cgroup/kubepods.slice/cgroup.controllers": "cpuset cpu memory",
		"cgroup/kubepods.slice/memory.min":         "0", "cgroup/kubepods.slice/memory.low": "0", "cgroup/kubepods.slice/memory.high": "max",
		"sys/devices/system/node/online": "0-1", "sys/devices/system/node/has_memory": "0-1",
		"sys/devices/system/cpu/online": "0-3", "proc/sys/kernel/numa_balancing": "0",
		"proc/cmdline": "ro", "proc/self/status": "Uid:\t0\t0\t0\t0\nCapEff:\t000001ffffffffff\n",
		"kubelet/config.yaml": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\n",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		files[extra[i]] = extra[i+1]
	}
	for p, c := range files {
		path := filepath.Join(top, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--sysfs-root", top + "/sys", "--proc-root", top + "/proc", "--cgroup-root", top + "/cgroup",
		"--kubelet-dir", top + "/kubelet", "--nri-socket", top + "/nri.sock", "--bin-root", top + "/root"}
}

func TestDoctorExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
		code  int
		row   string
	}{
		{"healthy", nil, 0, "kubelet-cpu-manager        ok"},
		{"autonuma on two nodes", []string{"proc/sys/kernel/numa_balancing", "1"}, 1, "numa-balancing             warn"},
		{"static memory manager", []string{"kubelet/config.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\nmemoryManagerPolicy: Static\n"}, 0, "kubelet-memory-manager     ok"},
		{"warn and fail", []string{"proc/sys/kernel/numa_balancing", "1", "sys/devices/system/cpu/online", "x"}, 2, "smt-and-offline-cpus       fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runLocus(t, append([]string{"doctor"}, doctorHost(t, tc.extra...)...)...)
			code := 0
			if err != nil {
				code = exitCode(err)
			}
			if code != tc.code {
				t.Fatalf("exit %d (%v), want %d:\n%s", code, err, tc.code, out)
			}
			if !strings.HasPrefix(out, "CHECK  ") || !strings.Contains(out, tc.row) {
				t.Errorf("no row %q in:\n%s", tc.row, out)
			}
		})
	}
}

func TestDoctorJSON(t *testing.T) {
	out, err := runLocus(t, append([]string{"doctor", "-o", "json"}, doctorHost(t, "proc/sys/kernel/numa_balancing", "1")...)...)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("err %v, want exit 1", err)
	}
	var rs []doctor.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if len(rs) != len(doctor.Checks()) {
		t.Fatalf("%d results for %d checks", len(rs), len(doctor.Checks()))
	}
	for _, r := range rs {
		if r.Check == "numa-balancing" && (r.Status != doctor.Warn || r.Do == "") {
			t.Errorf("numa-balancing: %+v", r)
		}
	}
	if _, err := runLocus(t, "doctor", "-o", "yaml"); err == nil || exitCode(err) != 2 {
		t.Errorf("-o yaml: %v, want a usage error", err)
	}
}

// On this host, with the real roots, the doctor's answers are what the
// host is: the cgroup version, the NUMA nodes and CPUs found by Locus's own
// discovery, the AutoNUMA setting, the memory QoS files.
func TestDoctorOnThisHost(t *testing.T) {
	if _, err := os.Stat(cgroup.DefaultRoot); err != nil {
		t.Fatalf("this host has no %s: %v", cgroup.DefaultRoot, err)
	}
	out, err := runLocus(t, "doctor", "-o", "json")
	var rs []doctor.Result
	if jerr := json.Unmarshal([]byte(out), &rs); jerr != nil {
		t.Fatalf("%v in %s", jerr, out)
	}
	got := map[string]doctor.Result{}
	for _, r := range rs {
		got[r.Check] = r
	}
	if code := doctor.ExitCode(rs); (code == 0) != (err == nil) || (err != nil && exitCode(err) != code) {
		t.Errorf("exit error %v for worst status %s", err, doctor.Worst(rs))
	}
	want := func(check string, status doctor.Status, words ...string) {
		t.Helper()
		r := got[check]
		if r.Status != status {
			t.Errorf("%s: %s (%s), want %s", check, r.Status, r.Found, status)
		}
		for _, w := range words {
			if !strings.Contains(r.Found, w) {
				t.Errorf("%s: %q not in %q", check, w, r.Found)
			}
		}
	}
	v, err := cgroup.Detect(cgroup.DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	want("cgroup-version", doctor.OK, "cgroup "+v.String())
	want("cgroup-controllers", doctor.OK)
	topo, err := topology.Discover("/sys")
	if err != nil {
		t.Fatal(err)
	}
	want("numa-nodes", doctor.OK, fmt.Sprintf("%d node(s) online", len(topo.Nodes)))
	want("smt-and-offline-cpus", doctor.OK, "online CPUs "+topo.CPUSet().String())
	if b, err := os.ReadFile("/proc/sys/kernel/numa_balancing"); err == nil {
		n := strings.TrimSpace(string(b))
		status := doctor.OK
		if n != "0" && len(topo.Nodes) > 1 {
			status = doctor.Warn
		}
		want("numa-balancing", status, "kernel.numa_balancing = "+n)
	}
	memRoot := cgroup.DefaultRoot
	if v == cgroup.V1 {
		memRoot += "/memory"
	}
	low, _ := filepath.Glob(memRoot + "/*/memory.low")
	if len(low) == 0 {
		want("memory-qos-files", doctor.Warn, "skipped: memory.min, memory.low, memory.high")
	} else {
		want("memory-qos-files", doctor.OK)
	}
	if b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		mode := regexp.MustCompile(`\[(\w+)\]`).FindStringSubmatch(string(b))
		if mode == nil {
			t.Fatalf("this host's THP mode %q has no [selection]", b)
		}
		want("transparent-hugepages", doctor.OK, "enabled = "+mode[1])
	}
	if b, err := os.ReadFile("/sys/kernel/mm/ksm/run"); err == nil && strings.TrimSpace(string(b)) != "1" {
		want("ksm-merge-across-nodes", doctor.OK, "run = "+strings.TrimSpace(string(b)))
	}
	if b, err := os.ReadFile("/proc/cmdline"); err == nil && !strings.Contains(string(b), "isolcpus=") && !strings.Contains(string(b), "nohz_full=") {
		want("isolated-cpus", doctor.OK, "no isolcpus=")
	}
	if os.Geteuid() == 0 {
		want("page-migration-permission", doctor.OK, "running as root")
	}
}
