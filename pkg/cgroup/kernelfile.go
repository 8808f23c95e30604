package cgroup

import (
	"os"
	"path/filepath"
	"strings"
)

// maxProbed bounds how many child cgroups KernelHas looks into.
const maxProbed = 64

// KernelHas says whether this kernel gives cgroups the knob's file, so that
// a decision can choose what to write before anything is written (cpu.idle,
// else the lowest cpu.shares). On v1 the file of the controller's root
// cgroup answers; on v2, where such files are not on the root, the first
// child cgroup that has the controller's files does (files the controller
// puts in every child: cpu.weight for cpu files, memory.current for memory
// files). It reads nothing but directory entries and never writes.
func (h *Hierarchy) KernelHas(k Knob) bool {
	spec, ok := Lookup(k)
	if !ok {
		return false
	}
	pl := spec.Placement(h.version)
	if pl == nil {
		return false
	}
	exists := func(dir, file string) bool {
		fi, err := os.Lstat(filepath.Join(dir, file))
		return err == nil && fi.Mode().IsRegular()
	}
	if h.version == V1 {
		return exists(filepath.Join(h.root, string(pl.Controller)), pl.File)
	}
	if exists(h.root, pl.File) {
		return true
	}
	marker := map[string]string{"cpu": "cpu.weight", "memory": "memory.current", "cpuset": "cpuset.cpus"}[strings.SplitN(pl.File, ".", 2)[0]]
	ents, err := os.ReadDir(h.root)
	if err != nil {
		return false
	}
	probed := 0
	for _, e := range ents {
		if !e.IsDir() || probed >= maxProbed {
			continue
		}
		probed++
		dir := filepath.Join(h.root, e.Name())
		if (marker != "" && exists(dir, marker)) || exists(dir, pl.File) {
			return exists(dir, pl.File)
		}
	}
	return false
}
