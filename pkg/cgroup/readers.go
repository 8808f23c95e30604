package cgroup

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locus-project/locus/pkg/topology"
)

// Children lists the child cgroups of rel in controller ctrl (ignored on v2)
// as relative paths, sorted.
func (h *Hierarchy) Children(ctrl Controller, rel string) ([]string, error) {
	dir, err := h.Dir(ctrl, rel)
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list child cgroups: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, joinRel(rel, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Exists reports whether cgroup rel exists in controller ctrl (ignored on v2).
func (h *Hierarchy) Exists(ctrl Controller, rel string) bool {
	dir, err := h.Dir(ctrl, rel)
	if err != nil {
		return false
	}
	fi, err := os.Stat(dir)
	if err == nil && fi.IsDir() {
		h.seenDir(dir, fi)
		return true
	}
	return false
}

// ExistsInScope is Exists answered once per Scope: a cgroup seen to exist
// in this scope is taken to exist still, without a look. For the questions a
// reconcile asks of the same cgroups over and over before it writes (which
// to plan for); whether one is gone after a failure is Exists' to answer.
// Outside a scope it is Exists.
func (h *Hierarchy) ExistsInScope(ctrl Controller, rel string) bool {
	_, ok := h.DirID(ctrl, rel)
	return ok
}

// CPUUsage is the CPU time the cgroup's tasks have used: v1 cpuacct.usage
// (nanoseconds), v2 cpu.stat usage_usec.
func (h *Hierarchy) CPUUsage(rel string) (time.Duration, error) {
	if h.version == V1 {
		n, err := h.readUint(CPUAcct, rel, "cpuacct.usage")
		return time.Duration(n), err
	}
	path, err := h.file("", rel, "cpu.stat")
	if err != nil {
		return 0, err
	}
	text, err := h.readFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "usage_usec" {
			// Parsed to 63 bits, then bounded again: microseconds are
			// multiplied into nanoseconds, which must not wrap negative.
			us, err := strconv.ParseUint(f[1], 10, 63)
			if err != nil || us > math.MaxInt64/uint64(time.Microsecond) {
				return 0, fmt.Errorf("%s: usage_usec %s is not a count of microseconds", path, topology.Quote(f[1]))
			}
			return time.Duration(us) * time.Microsecond, nil
		}
	}
	return 0, fmt.Errorf("%s: no usage_usec line", path)
}

func (h *Hierarchy) readUint(ctrl Controller, rel, name string) (uint64, error) {
	path, err := h.file(ctrl, rel, name)
	if err != nil {
		return 0, err
	}
	text, err := h.readFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %s is not a count", path, topology.Quote(text))
	}
	return n, nil
}

// ReadKnob returns the current text of a knob's file (whitespace trimmed).
// A knob the version or kernel lacks gives an error wrapping ErrUnsupported.
func (h *Hierarchy) ReadKnob(rel string, k Knob) (string, error) {
	spec, ok := Lookup(k)
	if !ok {
		return "", fmt.Errorf("unknown cgroup knob %q", k)
	}
	pl := spec.Placement(h.version)
	if pl == nil {
		return "", fmt.Errorf("%s on cgroup %s: %w", k, h.version, ErrUnsupported)
	}
	path, err := h.file(pl.Controller, rel, pl.File)
	if err != nil {
		return "", err
	}
	v, err := h.readFile(path)
	if errors.Is(err, os.ErrNotExist) && (pl.Extension || pl.Since != "") {
		if _, derr := os.Stat(dirOf(path)); derr == nil {
			return "", fmt.Errorf("%s: %w", path, ErrUnsupported)
		}
	}
	return v, err
}

// ErrUnsupported means the cgroup version or kernel has no such file.
var ErrUnsupported = errors.New("not supported by this kernel or cgroup version")

// CPUSetFilled says whether cgroup rel holds a cpuset: always on cgroup v2,
// where an empty cpuset.cpus is the parent's; on v1 once cpuset.cpus and
// cpuset.mems are both filled. A v1 cpuset cgroup is made with both empty,
// and the runtime that made it copies its parent's into them just after
// (see Writer.originalOf): a write in between is undone by that copy. A
// file that cannot be read (the cgroup gone) counts as filled: the write
// says what became of it.
func (h *Hierarchy) CPUSetFilled(rel string) bool {
	if h.version != V1 {
		return true
	}
	for _, k := range []Knob{CPUSetCPUs, CPUSetMems} {
		if v, err := h.ReadKnob(rel, k); err == nil && v == "" {
			return false
		}
	}
	return true
}
