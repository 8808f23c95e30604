package cgroup

import "fmt"

// Mark says what the Writer knows of the originals of a cgroup's files when
// the originals checkpoint could not tell it.
type Mark string

const (
	// NoMark: the store's records are all there is to know.
	NoMark Mark = ""
	// FromDefaults marks a cgroup Locus had changed when its originals were
	// lost: its files now hold Locus's values, so a file about to change
	// gets the parent's value (cpusets) or the kernel's default as its
	// original, never its current value.
	FromDefaults Mark = "defaults"
	// LeaveAlone marks a cgroup whose originals were in a damaged
	// checkpoint: a file without a recorded original is not written.
	LeaveAlone Mark = "leave-alone"
	// ChildrenFromParent marks a pod's cgroup whose containers Locus may
	// give a cpuset as they appear, before their original is on disk
	// (Covered): the cpuset files of the cgroups below it take their
	// parent's original, the value a runtime gives a container of a pod no
	// one pins, even when they already hold Locus's value (a runtime that
	// created them with it). The pod's own files are not covered.
	ChildrenFromParent Mark = "children-from-parent"
)

// CgroupMarker is an OriginalStore that also keeps Marks; a Writer honours
// them when its store is one. A mark covers the cgroup and those below it
// (ChildrenFromParent only those below).
type CgroupMarker interface {
	CgroupMark(rel string) Mark
}

// markOf is the mark that applies to a file of knob in rel.
func (w *Writer) markOf(rel string, knob Knob) Mark {
	m, ok := w.store.(CgroupMarker)
	if !ok {
		return NoMark
	}
	mark := m.CgroupMark(rel)
	if mark == ChildrenFromParent && knob != CPUSetCPUs && knob != CPUSetMems {
		return NoMark
	}
	return mark
}

// kernelDefaults are the values a new cgroup's files start with, by knob,
// as file text on v1 and on v2; cpusets are absent: they come from the
// parent (see defaultOriginal).
var kernelDefaults = map[Knob][2]string{
	MemoryMin:         {"0", "0"},
	MemoryLow:         {"0", "0"},
	MemoryHigh:        {"max", "max"},
	MemoryLimit:       {"-1", "max"},
	MemorySoftLimit:   {"-1", ""},
	MemoryWmarkRatio:  {"0", "0"},
	MemoryWmarkScale:  {"50", "50"},
	MemoryWmarkMinAdj: {"0", "0"},
	CPUQuota:          {"-1", "max"},
	CPUPeriod:         {"100000", ""},
	CPUShares:         {"1024", "100"},
	CPUBurst:          {"0", "0"},
}

// defaultOriginal is what a file of a FromDefaults cgroup is restored to:
// a cpuset file takes its parent's value (on v2 the root has none, and ""
// means "the parent's"), any other file the kernel's default.
func (w *Writer) defaultOriginal(it *item, rd *reads) (string, error) {
	if it.spec.Order == Nested {
		parent, _ := parentRel(it.rel)
		if parent == "" && w.h.version == V2 {
			return "", nil
		}
		path, err := w.h.file(it.pl.Controller, parent, it.pl.File)
		if err != nil {
			return "", err
		}
		f, err := rd.file(path)
		if err != nil {
			return "", fmt.Errorf("default of %s from its parent: %w", it.path, err)
		}
		return f.text, nil
	}
	d, ok := kernelDefaults[it.spec.Knob]
	if !ok {
		return "", fmt.Errorf("%s: no kernel default known", it.spec.Knob)
	}
	if w.h.version == V2 {
		if d[1] == "max" && it.spec.Knob == CPUQuota {
			return "max 100000", nil
		}
		return d[1], nil
	}
	return d[0], nil
}
