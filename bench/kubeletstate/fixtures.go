// Package kubeletstate writes the checkpoint fixtures of pkg/kubelet with
// the kubelet's own state packages (k8s.io/kubernetes v1.33.13), so that
// Locus's reading of them, and of their checksums, is proved against what
// a real kubelet writes.
package kubeletstate

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager/checksum"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/utils/cpuset"
)

// Fixtures names every fixture and how the kubelet's packages write it.
var Fixtures = []struct {
	Name  string
	Write func(dir, name string) error
}{
	{"cpu_none", cpuFixture("none", cpuset.New(), nil)},
	{"cpu_static_empty", cpuFixture("static", cpuset.New(0, 1, 2, 3, 4, 5, 6, 7), nil)},
	{"cpu_static", cpuFixture("static", cpuset.New(0, 1, 6, 7, 8, 9, 14, 15), map[string]map[string]cpuset.CPUSet{
		"2b1f3a9c-8d4e-4f6a-9b7c-1d2e3f4a5b6c": {"app": cpuset.New(2, 3, 10, 11), "B-side": cpuset.New(4)},
		"0f9e8d7c-6b5a-4c3d-2e1f-0a9b8c7d6e5f": {"db": cpuset.New(5, 12, 13)},
	})},
	{"cpu_v1", cpuV1Fixture},
	{"memory_none", memFixture("None", memstate.NUMANodeMap{}, nil)},
	{"memory_static", memFixture("Static", memstate.NUMANodeMap{
		0: {NumberOfAssignments: 2, Cells: []int{0}, MemoryMap: map[v1.ResourceName]*memstate.MemoryTable{
			v1.ResourceMemory: {TotalMemSize: 17179869184, SystemReserved: 1073741824, Allocatable: 16106127360, Reserved: 2147483648, Free: 13958643712},
			"hugepages-1Gi":   {TotalMemSize: 4294967296, Allocatable: 4294967296, Reserved: 1073741824, Free: 3221225472},
		}},
		1: {NumberOfAssignments: 0, Cells: []int{1}, MemoryMap: map[v1.ResourceName]*memstate.MemoryTable{
			v1.ResourceMemory: {TotalMemSize: 17179869184, Allocatable: 17179869184, Free: 17179869184},
		}},
	}, memstate.ContainerMemoryAssignments{
		"2b1f3a9c-8d4e-4f6a-9b7c-1d2e3f4a5b6c": {"app": {
			{NUMAAffinity: []int{0}, Type: v1.ResourceMemory, Size: 2147483648},
			{NUMAAffinity: []int{0}, Type: "hugepages-1Gi", Size: 1073741824},
		}},
	})},
	// What a kubelet never writes but its decoder accepts: nil states,
	// memory maps and tables, whose dump has go-spew's quirks.
	{"memory_nils", memCheckpointFixture(&memstate.MemoryManagerCheckpoint{PolicyName: "Static",
		MachineState: memstate.NUMANodeMap{
			0: {MemoryMap: map[v1.ResourceName]*memstate.MemoryTable{v1.ResourceMemory: nil}},
			1: nil,
			3: {Cells: []int{}},
		},
		Entries: memstate.ContainerMemoryAssignments{"u": {"c": nil}}})},
}

// WriteAll writes every fixture into dir, one file each.
func WriteAll(dir string) error {
	for _, f := range Fixtures {
		if err := f.Write(dir, f.Name); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return nil
}

// cpuFixture writes a v2 checkpoint through the CPU manager's state: the
// kubelet creates it empty, then stores it on every change.
func cpuFixture(policy string, def cpuset.CPUSet, as map[string]map[string]cpuset.CPUSet) func(string, string) error {
	return func(dir, name string) error {
		_ = os.Remove(filepath.Join(dir, name))
		st, err := cpustate.NewCheckpointState(dir, name, policy, containermap.NewContainerMap())
		if err != nil {
			return err
		}
		st.SetDefaultCPUSet(def)
		for uid, cs := range as {
			for c, set := range cs {
				st.SetCPUSet(uid, c, set)
			}
		}
		return nil
	}
}

// cpuV1Fixture is a checkpoint of the v1 format (entries by container ID),
// as kubelets before 1.18 wrote it and later ones still read it. Those
// kubelets named the type CPUManagerCheckpoint, which is the name the v1
// verification hashes (it replaces "CPUManagerCheckpointV1"); today's v1
// MarshalCheckpoint hashes the V1 name and writes a checksum its own
// VerifyChecksum refuses, so the checksum is made as VerifyChecksum checks it.
func cpuV1Fixture(dir, name string) error {
	cp := &cpustate.CPUManagerCheckpointV1{PolicyName: "static", DefaultCPUSet: "0-1,4-7",
		Entries: map[string]string{
			"4f2c9a0d5e8b7c6a1f3e2d4c5b6a79880f1e2d3c4b5a69788796a5b4c3d2e1f0": "2-3",
		}}
	object := strings.Replace(dump.ForHash(cp), "CPUManagerCheckpointV1", "CPUManagerCheckpoint", 1)
	h := fnv.New32a()
	h.Write([]byte(object))
	cp.Checksum = checksum.Checksum(h.Sum32())
	raw, err := json.Marshal(*cp)
	if err != nil {
		return err
	}
	if err := cp.VerifyChecksum(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), raw, 0o600)
}

func memFixture(policy string, machine memstate.NUMANodeMap, as memstate.ContainerMemoryAssignments) func(string, string) error {
	return func(dir, name string) error {
		_ = os.Remove(filepath.Join(dir, name))
		st, err := memstate.NewCheckpointState(dir, name, policy)
		if err != nil {
			return err
		}
		st.SetMachineState(machine)
		for uid, cs := range as {
			for c, blocks := range cs {
				st.SetMemoryBlocks(uid, c, blocks)
			}
		}
		return nil
	}
}

// memCheckpointFixture marshals a checkpoint the state package would not
// build (it clones machine states and drops nothing) with the kubelet's own
// MarshalCheckpoint, which computes its checksum.
func memCheckpointFixture(cp *memstate.MemoryManagerCheckpoint) func(string, string) error {
	return func(dir, name string) error {
		raw, err := cp.MarshalCheckpoint()
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name), raw, 0o600)
	}
}
