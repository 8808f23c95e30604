package kubelet

import (
	"strconv"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/topology"
)

// checkCPUs fails t when a parsed CPU manager checkpoint holds more than
// its bounds allow.
func checkCPUs(t *testing.T, c CPUManager) {
	t.Helper()
	if len(c.Assignments) > MaxPods || len(c.ByContainerID) > MaxEntries {
		t.Fatalf("%d pods, %d container IDs", len(c.Assignments), len(c.ByContainerID))
	}
	entries, cpus := 0, c.Default.Size()
	for _, cs := range c.Assignments {
		if len(cs) > MaxContainers {
			t.Fatalf("%d containers", len(cs))
		}
		entries += len(cs)
		for _, set := range cs {
			cpus += set.Size()
		}
	}
	for _, set := range c.ByContainerID {
		cpus += set.Size()
	}
	if entries > MaxEntries || cpus > MaxCheckpointCPUs {
		t.Fatalf("%d containers, %d CPUs in all", entries, cpus)
	}
	if all := c.All(); all.Size() > 0 && all.List()[all.Size()-1] > topology.MaxCPUID {
		t.Fatalf("cpu %d", all.List()[all.Size()-1])
	}
}

// FuzzParseCPUManager reads hostile cpu_manager_state files: an answer in
// bounded time, a short error naming what is wrong, or a bounded checkpoint.
func FuzzParseCPUManager(f *testing.F) {
	for _, n := range []string{"cpu_none", "cpu_static", "cpu_static_empty", "cpu_v1"} {
		raw, _ := fixtureFS.ReadFile("testdata/checkpoints/" + n)
		f.Add(string(raw))
	}
	fuzzseed.Add(f, func(s string) string {
		return `{"policyName":"static","defaultCpuSet":` + strconv.Quote(s) + `,"entries":{"u":{"c":` + strconv.Quote(s) + `}},"checksum":0}`
	})
	fuzzseed.Add(f, func(s string) string { return `{"policyName":"static","entries":{"id":` + strconv.Quote(s) + `}}` })
	// Many lists, each within its bound, over the budget in all.
	f.Add(cpuCheckpoint("0", 1500, func(int) string { return "0-8191" }))
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var c CPUManager
		var err error
		fuzzseed.Timed(t, "ParseCPUManager", func() { c, err = ParseCPUManager([]byte(raw)) })
		fuzzseed.CheckError(t, err)
		if err == nil {
			checkCPUs(t, c)
		}
	})
}

// FuzzParseMemoryManager does the same for memory_manager_state.
func FuzzParseMemoryManager(f *testing.F) {
	for _, n := range []string{"memory_none", "memory_static", "memory_nils"} {
		raw, _ := fixtureFS.ReadFile("testdata/checkpoints/" + n)
		f.Add(string(raw))
	}
	fuzzseed.Add(f, func(s string) string {
		return `{"policyName":"Static","machineState":{"0":{"cells":[` + s + `]}},"entries":{"u":{"c":[{"numaAffinity":[` + s + `],"type":` + strconv.Quote(s) + `}]}},"checksum":1}`
	})
	fuzzseed.Add(f, func(s string) string {
		return `{"policyName":"Static","machineState":{"0":{"memoryMap":{"memory":{"reserved":` + s + `,"systemReserved":` + s + `}}}},` +
			`"entries":{"u":{"c":[{"numaAffinity":[0],"type":"memory","size":` + s + `}]}},"checksum":0}`
	})
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var m MemoryManager
		var err error
		fuzzseed.Timed(t, "ParseMemoryManager", func() { m, err = ParseMemoryManager([]byte(raw)) })
		fuzzseed.CheckError(t, err)
		if err == nil && (len(m.Assignments) > MaxPods || len(m.Nodes) > MaxNUMANodes) {
			t.Fatalf("%d pods, %d nodes", len(m.Assignments), len(m.Nodes))
		}
		for id, res := range m.Assigned {
			for name, b := range res {
				if b > maxBlockBytes || len(name) > maxNameLen {
					t.Fatalf("node %d: %s of %d bytes accepted", id, name, b)
				}
			}
		}
		for _, cs := range m.Assignments {
			for _, blocks := range cs {
				for _, b := range blocks {
					if b.Bytes > maxBlockBytes {
						t.Fatalf("block of %d bytes accepted", b.Bytes)
					}
				}
			}
		}
	})
}

// FuzzParseConfig reads hostile kubelet configuration files.
func FuzzParseConfig(f *testing.F) {
	const head = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
	f.Add(head + "cpuManagerPolicy: static\nreservedSystemCPUs: 0,8\n")
	fuzzseed.Add(f, func(s string) string { return head + "reservedSystemCPUs: " + strconv.Quote(s) + "\n" })
	fuzzseed.Add(f, func(s string) string { return head + "cpuManagerPolicy: " + strconv.Quote(s) + "\n" })
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var c Config
		var err error
		fuzzseed.Timed(t, "ParseConfig", func() { c, err = ParseConfig([]byte(raw)) })
		fuzzseed.CheckError(t, err)
		if err == nil && !oneOf(c.CPUManagerPolicy, configValues["cpuManagerPolicy"]) {
			t.Fatalf("policy %q", c.CPUManagerPolicy)
		}
	})
}
