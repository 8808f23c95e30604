package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/locus-project/locus/pkg/hostconfig"
)

// The cgroup v2 tree is a plain directory laid out like the kernel's, with
// the Alibaba Cloud Linux / Anolis memory files too, so that every memory
// QoS file is really written.
var v2Files = map[string]string{
	"cgroup.controllers": "cpuset cpu io memory pids", "cgroup.subtree_control": "cpuset cpu memory",
	"cgroup.procs": "", "cgroup.threads": "", "cpuset.cpus": "", "cpuset.mems": "",
	"cpuset.cpus.effective": "", "cpuset.mems.effective": "", "cpu.max": "max 100000", "cpu.weight": "100",
	"cpu.stat":   "usage_usec 0\nuser_usec 0\nsystem_usec 0",
	"memory.min": "0", "memory.low": "0", "memory.high": "max", "memory.max": "max", "memory.current": "0",
	"memory.wmark_ratio": "0", "memory.wmark_high": "max", "memory.wmark_min_adj": "0",
	"memory.wmark_scale_factor": "50",
}

// v2RootOnly are the files a v2 root cgroup has; the others are absent there.
var v2RootOnly = []string{"cgroup.controllers", "cgroup.subtree_control", "cgroup.procs", "cgroup.threads",
	"cpu.stat", "cpuset.cpus.effective", "cpuset.mems.effective"}

const parent = "bench.slice"

func workloadName(i int) string { return fmt.Sprintf("w%03d", i) }

// writeCgroupTree lays out root/bench.slice/w000... with every v2 file.
func writeCgroupTree(root string, n int) error {
	if err := writeFiles(root, v2RootOnly); err != nil {
		return err
	}
	all := make([]string, 0, len(v2Files))
	for name := range v2Files {
		all = append(all, name)
	}
	if err := writeFiles(filepath.Join(root, parent), all); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := writeFiles(filepath.Join(root, parent, workloadName(i)), all); err != nil {
			return err
		}
	}
	return nil
}

func writeFiles(dir string, names []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v2Files[name]+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// scenario is one configuration of the benchmark's workloads.
type scenario struct {
	n      int  // workloads; the first half is exclusive
	memQoS bool // memory QoS on for the LS and BE classes
	// wide doubles the CPUs of every other exclusive workload (1 -> 2).
	wide bool
}

func (s scenario) exclusive(i int) bool { return i < s.n/2 }

// cpus is the CPU count of exclusive workload i.
func (s scenario) cpus(i int) int {
	if s.wide && i%2 == 0 {
		return 2
	}
	return 1
}

// class is LS for the exclusive half, LS/BE alternating for the shared half.
func (s scenario) class(i int) string {
	if s.exclusive(i) || i%2 == 0 {
		return "LS"
	}
	return "BE"
}

// hostConfig renders the scenario as the agent's HostConfig. Every workload
// is Burstable (request below limit), so the class config governs it.
func (s scenario) hostConfig() ([]byte, error) {
	qos := fmt.Sprintf(`{"clusterStrategy": {
  "lsClass": {"memoryQOS": {"enable": %[1]t, "lowLimitPercent": 100, "throttlingPercent": 80}},
  "beClass": {"memoryQOS": {"enable": %[1]t, "throttlingPercent": 80}}}}`, s.memQoS)
	hc := hostconfig.HostConfig{APIVersion: hostconfig.APIVersion, Kind: hostconfig.Kind,
		ReservedCPUs: "0,96", ResourceQOSConfig: json.RawMessage(qos)}
	for i := 0; i < s.n; i++ {
		w := hostconfig.Workload{Name: workloadName(i), Cgroup: parent + "/" + workloadName(i),
			QOSClass: s.class(i), Resources: hostconfig.Resources{
				Requests: hostconfig.ResourceList{Memory: quantity("64Mi")},
				Limits:   hostconfig.ResourceList{Memory: quantity("128Mi")}}}
		if s.exclusive(i) {
			w.Annotations = map[string]string{"cpuset-scheduler": "true", "cpu-policy": "spread-by-pcpus"}
			w.Resources.Requests.CPU = quantity("500m")
			w.Resources.Limits.CPU = quantity(fmt.Sprint(s.cpus(i)))
		}
		hc.Workloads = append(hc.Workloads, w)
	}
	return json.MarshalIndent(hc, "", "  ")
}

func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// writeConfig replaces the config file atomically, as editors and ConfigMap
// mounts do, so the agent never reads half a file.
func writeConfig(path string, s scenario) error {
	raw, err := s.hostConfig()
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
