package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/runner"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// leasePrefix names the CPUs `locus run` holds; no workload name can start
// with it.
const leasePrefix = "lease:"

// planMemo is the last decision and what it was computed from. The decision
// is a pure function of its input, so a reconcile whose input is the same
// (at rest: same topology, config, assignments and leases) reuses it.
type planMemo struct {
	topo *topology.Topology
	cfg  *workload.Config
	key  string // previous assignments and leases, as JSON
	d    decide.Desired
}

// decide computes the decision under the checkpoint lock, so that `locus run`
// never hands out the same CPUs: it drops the leases of runs that died and
// left nothing running, decides, and saves the assignments when they or the
// leases changed. It returns the decision and the assignments in force
// before it. A dry run decides on ck and saves nothing.
func (a *Agent) decide(cfg *workload.Config, rs []resolved, ck state.Checkpoint) (decide.Desired, map[string]workload.Assignment, error) {
	if a.opts.DryRun {
		return a.compute(cfg, rs, ck), ck.Assignments, nil
	}
	unlock, err := a.store.Lock()
	if err != nil {
		return decide.Desired{}, nil, fmt.Errorf("save checkpoint: %w", err)
	}
	defer unlock()
	c, err := a.store.Load()
	if err != nil {
		return decide.Desired{}, nil, err
	}
	leases := make(map[string]state.Lease, len(c.Leases))
	for k, l := range c.Leases {
		leases[k] = l
	}
	// A lease of a dead owner still counts while its cgroup has processes:
	// its command may outlive `locus run`. Once the cgroup is empty or gone
	// nobody will release it, so it is dropped here, as `locus run` does.
	dropped := runner.DropStale(&c, a.h)
	d := a.compute(cfg, rs, c)
	prev := c.Assignments
	if len(dropped) > 0 || !sameAssignments(prev, d.Assignments) {
		c.Assignments = d.Assignments
		if err := a.store.Save(c); err != nil {
			return decide.Desired{}, nil, fmt.Errorf("save checkpoint: %w", err)
		}
	}
	for _, name := range sortedStrings(dropped) {
		l := leases[name]
		a.events.Emit(eventlog.Normal, "LeaseDropped", "", "lease %s of a `locus run` that is gone dropped: cgroup %s holds no process; CPUs %q are free again",
			name, l.Cgroup, l.Assignment.CPUs.String())
	}
	return d, prev, nil
}

// compute decides, or reuses the last decision when its input is the same.
func (a *Agent) compute(cfg *workload.Config, rs []resolved, c state.Checkpoint) decide.Desired {
	in := a.planInput(cfg, rs, &c)
	key := inputKey(c.Assignments, in.Workloads)
	if m := a.memo; m != nil && m.topo == a.topo && m.cfg == cfg && m.key == key {
		return m.d
	}
	d := decide.Compute(in)
	for name := range d.Assignments {
		if strings.HasPrefix(name, leasePrefix) {
			delete(d.Assignments, name)
		}
	}
	a.memo = &planMemo{topo: a.topo, cfg: cfg, key: key, d: d}
	return d
}

// inputKey is the part of the decision's input that comes from the
// checkpoint: the previous assignments and the leased CPUs.
func inputKey(prev map[string]workload.Assignment, ws []workload.Workload) string {
	leases := map[string]workload.Assignment{}
	for _, w := range ws {
		if strings.HasPrefix(w.Name, leasePrefix) {
			leases[w.Name] = workload.Assignment{CPUs: w.CPU.Decided, Policy: w.CPU.Policy, RequestMilli: w.CPU.RequestMilli}
		}
	}
	raw, _ := json.Marshal(struct {
		Prev, Leases map[string]workload.Assignment
	}{prev, leases})
	return string(raw)
}

// planInput builds the decision's input: the configured workloads, the
// assignments in force, and the CPUs `locus run` leases, which count as
// decided elsewhere. A lease with no CPUs (a run in the shared pool) holds
// nothing to route around and is left out.
func (a *Agent) planInput(cfg *workload.Config, rs []resolved, c *state.Checkpoint) decide.Input {
	in := decide.Input{Topology: a.topo, Reserved: cfg.Reserved, BEPool: cfg.BEPool,
		UnrestrictedMems: cfg.Host.UnrestrictedMems, Previous: c.Assignments, MemQoS: cfg.MemQoS, Namespaces: cfg.Namespaces,
		MemQoSOptions: memqos.Options{V1SoftLimitForLow: a.opts.V1SoftLimitForLow,
			ThrottleNotBelowRequest: a.opts.ThrottleNotBelowRequest}}
	for _, r := range rs {
		in.Workloads = append(in.Workloads, r.plan)
	}
	for _, key := range sortedKeys(c.Leases) {
		l := c.Leases[key]
		if l.Assignment.CPUs.IsEmpty() {
			continue
		}
		in.Workloads = append(in.Workloads, workload.Workload{Name: leasePrefix + key, CPU: workload.CPUNeed{
			Exclusive: true, CPUs: l.Assignment.CPUs.Size(), Policy: l.Assignment.Policy,
			RequestMilli: l.Assignment.RequestMilli, Decided: l.Assignment.CPUs}})
	}
	return in
}

func sameAssignments(a, b map[string]workload.Assignment) bool {
	if len(a) != len(b) {
		return false
	}
	for name, x := range a {
		y, ok := b[name]
		if !ok || !x.CPUs.Equals(y.CPUs) || x.Policy != y.Policy || x.RequestMilli != y.RequestMilli {
			return false
		}
	}
	return true
}

// topologyFiles change whenever the topology the decision uses does: CPUs
// and nodes going on- or offline, isolated CPUs, nodes gaining memory.
var topologyFiles = []string{"devices/system/cpu/online", "devices/system/cpu/isolated",
	"devices/system/node/online", "devices/system/node/has_memory"}

// refreshTopology discovers the topology again only when one of
// topologyFiles changed, so a resync reads four small files instead of the
// whole CPU tree. A failed discovery keeps the topology in force.
func (a *Agent) refreshTopology() error {
	var sb strings.Builder
	for _, f := range topologyFiles {
		raw, _ := os.ReadFile(filepath.Join(a.opts.SysfsRoot, f))
		sb.Write(raw)
		sb.WriteByte(0)
	}
	if a.topo != nil && sb.String() == a.topoStamp {
		return nil
	}
	t, err := topology.Discover(a.opts.SysfsRoot)
	if err != nil {
		return err
	}
	a.topo, a.topoStamp = t, sb.String()
	return nil
}

func sortedStrings(xs []string) []string {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return sortedKeys(m)
}
