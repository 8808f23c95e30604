package balancerloop

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/locus-project/locus/pkg/atomicfile"
	"github.com/locus-project/locus/pkg/balancer"
)

// File keeps the balancer's placements under the state directory,
// so a restarted agent moves nothing, and names the cgroups outside the
// workloads it wrote, so turning it off can restore them.
const File = "numa-balancer.json"

type record struct {
	State balancer.State `json:"state"`
	// Settled maps a group to the partitions (joined by commas) where its
	// memory was moved home and its cpuset.mems narrowed.
	Settled map[string]string `json:"settled,omitempty"`
	// Extra are the cgroups written that are no workload's.
	Extra []string `json:"extraCgroups,omitempty"`
}

// view is the record without what changes every interval (loads), so the
// file is written only when a placement, an overflow or a cgroup changes.
func (r record) view() string {
	v := r
	v.State.Background = nil
	v.State.Groups = map[string]balancer.GroupState{}
	for k, g := range r.State.Groups {
		g.Load = 0
		v.State.Groups[k] = g
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// load reads File; a missing or unreadable one starts afresh.
func (r *Runner) load() record {
	var rec record
	if !r.d.Load(File, "numa balancer: the last placements", &rec) {
		return record{}
	}
	return rec
}

// save writes File when a placement, an overflow or the cgroups
// changed. A failure is logged: the record in memory still holds.
func (r *Runner) save() {
	v := r.rec.view()
	if v == r.saved {
		return
	}
	raw, err := json.MarshalIndent(r.rec, "", "  ")
	if err == nil {
		err = atomicfile.Write(filepath.Join(r.d.StateDir, File), append(raw, '\n'), 0o600)
	}
	if err != nil {
		r.d.Log.Warn("numa balancer: cannot save the placements", "err", fmt.Errorf("%s: %w", File, err))
		return
	}
	r.saved = v
}

// memSplit is a group's own memory (memory.numa_stat: anonymous and
// shared, not the page cache or the binary's text, which a memory locality
// run may rightly leave) off and on its nodes.
type memSplit struct{ remote, total uint64 }

func (m memSplit) String() string {
	return fmt.Sprintf("%dMi (%d%%)", m.remote>>20, 100*m.remote/max(m.total, 1))
}

// remoteNow reads how much of the group's memory is off the nodes now;
// false if it cannot be read.
func (r *Runner) remoteNow(g group, nodes []int) (memSplit, bool) {
	gs, err := r.reader.Group(g.cgroup)
	if err != nil {
		return memSplit{}, false
	}
	var m memSplit
	for n, b := range gs.Mem {
		m.total += b
		if !slices.Contains(nodes, n) {
			m.remote += b
		}
	}
	return m, true
}
