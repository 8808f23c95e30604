package runner

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/procfs"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

const mib = 1 << 20

// The MemoryOnly machine: node 0 holds CPUs 0-15, node 1 CPUs 16-31
// (siblings adjacent: core k is CPUs 2k and 2k+1), node 2 is memory only.
func host(reserved, bePool string) Host {
	return Host{Topology: fixture.MustBuild(fixture.MemoryOnly),
		Reserved: mustParse(reserved), BEPool: mustParse(bePool)}
}

func checkpoint(assignments map[string]workload.Assignment, leases map[string]string) state.Checkpoint {
	cp := state.Empty()
	for n, a := range assignments {
		cp.Assignments[n] = a
	}
	for n, cpus := range leases {
		cp.Leases[n] = state.Lease{Cgroup: "locus.slice/" + n,
			Assignment: workload.Assignment{CPUs: mustParse(cpus), Policy: cpualloc.FullPCPUs}}
	}
	return cp
}

func excl(cpus string) workload.Assignment {
	return workload.Assignment{CPUs: mustParse(cpus), Policy: cpualloc.FullPCPUs}
}

func op(d Plan, k cgroup.Knob) (string, bool) {
	for _, o := range d.Ops {
		if o.Knob == k {
			return o.Value, true
		}
	}
	return "", false
}

func TestPlanRunCPUs(t *testing.T) {
	ls := memqos.ClassLS
	for _, tc := range []struct {
		name        string
		host        Host
		cp          state.Checkpoint
		req         Request
		cpus, mems  string
		pool        string
		leaseCPUs   string
		leasePolicy cpualloc.Policy
	}{
		{name: "exclusive avoids reserved, assignments and leases",
			host: host("0-1", ""),
			cp:   checkpoint(map[string]workload.Assignment{"db": excl("2-5")}, map[string]string{"run-9": "6-7"}),
			req:  Request{CPUs: 4, QoS: ls}, cpus: "8-11", mems: "0", pool: "exclusive",
			leaseCPUs: "8-11", leasePolicy: cpualloc.FullPCPUs},
		{name: "exclusive lands on the other node when one is full",
			host: host("", ""),
			cp:   checkpoint(map[string]workload.Assignment{"db": excl("0-13")}, nil),
			req:  Request{CPUs: 4, QoS: ls, NUMAStrategy: cpualloc.MostAllocated},
			cpus: "16-19", mems: "1", pool: "exclusive", leaseCPUs: "16-19", leasePolicy: cpualloc.FullPCPUs},
		{name: "spread policy is kept in the lease",
			host: host("", ""), cp: state.Empty(),
			req:  Request{CPUs: 2, QoS: ls, Policy: cpualloc.SpreadByPCPUs},
			cpus: "0,2", mems: "0", pool: "exclusive", leaseCPUs: "0,2", leasePolicy: cpualloc.SpreadByPCPUs},
		{name: "shared pool is what nobody holds",
			host: host("0-1", ""),
			cp:   checkpoint(map[string]workload.Assignment{"db": excl("2-15")}, map[string]string{"run-9": "16-17", "run-8": ""}),
			req:  Request{QoS: ls}, cpus: "18-31", mems: "1", pool: "shared", leaseCPUs: ""},
		{name: "static-burst assignments stay in the shared pool",
			host: host("", ""),
			cp: checkpoint(map[string]workload.Assignment{"burst": {CPUs: mustParse("0-3"),
				Policy: cpualloc.StaticBurst, RequestMilli: 1000}}, nil),
			req: Request{QoS: ls}, cpus: "0-31", mems: "0-1", pool: "shared", leaseCPUs: ""},
		{name: "BE runs in the BE pool",
			host: host("", "28-31"), cp: checkpoint(nil, map[string]string{"run-9": "30-31"}),
			req: Request{QoS: memqos.ClassBE}, cpus: "28-29", mems: "1", pool: "be", leaseCPUs: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := PlanRun(tc.host, tc.cp, tc.req, "p/run-1")
			if err != nil {
				t.Fatal(err)
			}
			if d.CPUs.String() != tc.cpus || d.Mems != tc.mems || d.Pool != tc.pool {
				t.Errorf("got cpus %s mems %s pool %s, want %s %s %s", d.CPUs, d.Mems, d.Pool, tc.cpus, tc.mems, tc.pool)
			}
			if got, _ := op(d, cgroup.CPUSetCPUs); got != tc.cpus {
				t.Errorf("cpuset.cpus op %q, want %q", got, tc.cpus)
			}
			if got, _ := op(d, cgroup.CPUSetMems); got != tc.mems {
				t.Errorf("cpuset.mems op %q, want %q", got, tc.mems)
			}
			if d.Ops[0].Knob != cgroup.CPUSetMems {
				t.Errorf("first op %s: mems must come before cpus", d.Ops[0].Knob)
			}
			if d.Lease.Cgroup != "p/run-1" || d.Lease.Assignment.CPUs.String() != tc.leaseCPUs ||
				d.Lease.Assignment.Policy != tc.leasePolicy {
				t.Errorf("lease %+v, want cpus %q policy %q", d.Lease, tc.leaseCPUs, tc.leasePolicy)
			}
		})
	}
}

func TestPlanRunRefuses(t *testing.T) {
	full := checkpoint(map[string]workload.Assignment{"all": excl("0-31")}, nil)
	for _, tc := range []struct {
		name string
		cp   state.Checkpoint
		req  Request
		is   error
		msg  string
	}{
		{"too many CPUs", state.Empty(), Request{CPUs: 34, QoS: "LS"}, cpualloc.ErrInsufficient, "not enough free CPUs"},
		{"taken by a lease", checkpoint(nil, map[string]string{"run-1": "0-29"}), Request{CPUs: 4, QoS: "LS"},
			cpualloc.ErrInsufficient, "not enough free CPUs"},
		{"shared pool empty", full, Request{QoS: "LS"}, cpualloc.ErrInsufficient, "shared pool is empty"},
		{"unknown policy", state.Empty(), Request{CPUs: 1, QoS: "LS", Policy: "pack"}, cpualloc.ErrInvalidRequest, "unknown policy"},
		{"negative cpus", state.Empty(), Request{CPUs: -1, QoS: "LS"}, ErrBadRequest, "negative"},
		{"unknown qos", state.Empty(), Request{QoS: "GOLD"}, ErrBadRequest, `qos "GOLD"`},
		{"absurd memory", state.Empty(), Request{QoS: "LS", MemoryRequest: 1 << 51}, ErrBadRequest, "more than"},
		{"request over limit", state.Empty(), Request{QoS: "LS", MemoryRequest: 2 * mib, MemoryLimit: mib},
			ErrBadRequest, "exceeds the memory limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanRun(host("", ""), tc.cp, tc.req, "p/run-1")
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.is, tc.msg)
			}
		})
	}
}

func TestPlanRunMemory(t *testing.T) {
	h := host("", "")
	d, err := PlanRun(h, state.Empty(), Request{QoS: "LS", MemoryLimit: 200 * mib, MemoryRequest: 100 * mib}, "p/r")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := op(d, cgroup.MemoryLimit); v != "209715200" {
		t.Errorf("memory.limit_in_bytes = %q, want 209715200", v)
	}
	if _, ok := op(d, cgroup.MemoryLow); ok || d.MemQoS != nil {
		t.Errorf("memory QoS files written without --memory-qos auto")
	}

	for _, tc := range []struct {
		qos               memqos.Class
		low, high, minAdj string
	}{
		// The recommended profile is the seed's defaults: min, low and
		// throttling off (the files keep their values), wmarkRatio 95 and
		// the class's wmarkMinAdj: LS −25, BE 50 (later global reclaim).
		{"LS", "", "", "-25"},
		{"BE", "", "", "50"},
	} {
		d, err := PlanRun(h, state.Empty(), Request{QoS: tc.qos, MemoryLimit: 200 * mib,
			MemoryRequest: 100 * mib, MemoryQoS: true}, "p/r")
		if err != nil {
			t.Fatal(err)
		}
		if d.MemQoS == nil || !d.MemQoS.Enabled {
			t.Fatalf("%s: memory QoS not on: %+v", tc.qos, d.MemQoS)
		}
		low, _ := op(d, cgroup.MemoryLow)
		high, _ := op(d, cgroup.MemoryHigh)
		adj, _ := op(d, cgroup.MemoryWmarkMinAdj)
		if low != tc.low || high != tc.high || adj != tc.minAdj {
			t.Errorf("%s: low %q high %q min_adj %q, want %q %q %q", tc.qos, low, high, adj, tc.low, tc.high, tc.minAdj)
		}
		if _, ok := op(d, cgroup.MemoryWmarkHigh); ok {
			t.Errorf("%s: the read-only memory.wmark_high is written", tc.qos)
		}
		if !strings.Contains(d.Describe(), "memory QoS                   on:") {
			t.Errorf("%s: Describe does not say memory QoS is on:\n%s", tc.qos, d.Describe())
		}
	}
}

func TestStaleLeases(t *testing.T) {
	cp := state.Empty()
	for name, pid := range map[string]int{"alive": 1, "dead-empty": 2, "dead-busy": 3} {
		cp.Leases[name] = state.Lease{Cgroup: "p/" + name, Owner: state.Process{PID: pid, StartTime: 7}}
	}
	alive := func(p state.Process) bool { return p.PID == 1 }
	busy := func(cg string) bool { return cg == "p/dead-busy" }
	got := StaleLeases(cp, alive, busy)
	if len(got) != 1 || got[0] != "dead-empty" {
		t.Fatalf("stale = %v, want [dead-empty]", got)
	}
}

func TestStartTime(t *testing.T) {
	line := "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 200"
	if st, err := procfs.ParseStat(line); err != nil || st.StartTime != 987654 {
		t.Fatalf("ParseStat start time = %d, %v; want 987654", st.StartTime, err)
	}
	for _, bad := range []string{"no parens", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 x"} {
		if _, err := procfs.ParseStat(bad); err == nil {
			t.Errorf("ParseStat(%q) accepted a bad line", bad)
		}
	}
	me, err := Self()
	if err != nil || me.StartTime == 0 || !ProcessAlive(me) {
		t.Fatalf("Self = %+v, %v: want a live process with a start time", me, err)
	}
	if ProcessAlive(state.Process{PID: me.PID, StartTime: me.StartTime + 1}) {
		t.Error("a different start time (a recycled pid) counts as alive")
	}
}

func mustParse(s string) cpuset.CPUSet {
	c, err := cpuset.Parse(s)
	if err != nil {
		panic(err)
	}
	return c
}

// `locus run --cpus 1` beside a workload holding the other CPU would leave
// the shared pool empty: refused, naming the pool.
func TestPlanRunRefusesToEmptyTheSharedPool(t *testing.T) {
	h := host("", "")
	all := h.Topology.CPUSet()
	// Everything but CPU 31 is held by the agent's workloads.
	cp := checkpoint(map[string]workload.Assignment{"demo-ls": excl(all.Difference(cpuset.New(31)).String())}, nil)
	// With nobody in the shared pool, its last CPU may go.
	if _, err := PlanRun(h, cp, Request{CPUs: 1, QoS: memqos.ClassLS}, "locus.slice/run"); err != nil {
		t.Fatalf("nobody runs in the shared pool, yet: %v", err)
	}
	cp.Workloads["demo-be"] = state.Workload{Cgroup: "locus.slice/demo-be"}
	_, err := PlanRun(h, cp, Request{CPUs: 1, QoS: memqos.ClassLS}, "locus.slice/run")
	if !errors.Is(err, cpualloc.ErrInsufficient) || !strings.Contains(err.Error(), "shared pool empty") || !strings.Contains(err.Error(), "demo-be run there") {
		t.Fatalf("PlanRun = %v, want an error naming the shared pool", err)
	}
	// Static-burst CPUs stay in the shared pool: allowed.
	if _, err := PlanRun(h, cp, Request{CPUs: 1, QoS: memqos.ClassLS, Policy: cpualloc.StaticBurst}, "locus.slice/run"); err != nil {
		t.Fatalf("static-burst run refused: %v", err)
	}
}

// A run with CPUs of its own places its memory request with them: on the
// MemoryOnly machine (64 GiB a node) 80 GiB spills onto the nearest node,
// its mems name the group and its lease records it, so the agent counts
// it; more than the machine holds is refused. The agent's own assignments
// hold their memory first.
func TestPlanRunPlacesMemory(t *testing.T) {
	const gib = 1 << 30
	h := host("", "")
	d, err := PlanRun(h, state.Empty(), Request{CPUs: 2, QoS: "LS", MemoryRequest: 80 * gib}, "p/r")
	if err != nil {
		t.Fatal(err)
	}
	if a := d.Lease.Assignment; len(a.MemNodes) != 2 || a.Memory.Bytes != 80*gib || d.Mems != cpuset.New(a.MemNodes...).String() {
		t.Errorf("mems %q, lease %+v: want the memory's two nodes recorded", d.Mems, a)
	}
	if _, err := PlanRun(h, state.Empty(), Request{CPUs: 2, QoS: "LS", MemoryRequest: 200 * gib}, "p/r"); !errors.Is(err, cpualloc.ErrInsufficient) ||
		!strings.Contains(err.Error(), "memory") {
		t.Errorf("200Gi: err = %v, want ErrInsufficient naming memory", err)
	}
	held := excl("0-3")
	held.Memory = cpualloc.Memory{Bytes: 60 * gib}
	d, err = PlanRun(h, checkpoint(map[string]workload.Assignment{"db": held}, nil), Request{CPUs: 2, QoS: "LS", MemoryRequest: 10 * gib}, "p/r")
	if err != nil {
		t.Fatal(err)
	}
	if d.Mems == "0" {
		t.Errorf("mems %q: node 0 has 4 GiB left beside db's 60", d.Mems)
	}
}

// Huge pages asked for land on the node that has them, are recorded with
// the lease, and more than any node has are refused naming them.
func TestPlanRunPlacesHugePages(t *testing.T) {
	const mib = 1 << 20
	h := host("", "")
	h.Topology = fixture.MustBuild(fixture.Shape{Name: "huge-2n", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1,
		CoresPerSocket: 4, ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 8 << 30,
		HugePages: []fixture.NodeHugePages{{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 32, Free: 32}}}})
	d, err := PlanRun(h, state.Empty(), Request{CPUs: 2, QoS: "LS", HugePages2Mi: 48 * mib}, "p/r")
	if err != nil {
		t.Fatal(err)
	}
	if a := d.Lease.Assignment; d.Mems != "1" || a.Memory.HugePages2Mi != 48*mib || !a.CPUs.IsSubsetOf(h.Topology.Nodes[1].CPUs) {
		t.Errorf("mems %q, lease %+v: want 2 CPUs and 48Mi of huge pages on node 1, recorded", d.Mems, a)
	}
	if _, err := PlanRun(h, state.Empty(), Request{CPUs: 2, QoS: "LS", HugePages2Mi: 96 * mib}, "p/r"); !errors.Is(err, cpualloc.ErrInsufficient) ||
		!strings.Contains(err.Error(), "hugepages-2Mi") {
		t.Errorf("96Mi: err = %v, want ErrInsufficient naming hugepages-2Mi", err)
	}
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{CPUs: 2, QoS: "LS", HugePages2Mi: 3 * mib}, "not a whole number of 2048 KiB pages"},
		{Request{CPUs: 2, QoS: "LS", HugePages1Gi: -1}, "hugepages-1Gi -1 is negative"},
		{Request{QoS: "LS", HugePages2Mi: 2 * mib}, "needs CPUs of its own"},
		{Request{CPUs: 1, QoS: "LS", HugePages1Gi: 1 << 51}, "more than"},
	} {
		if _, err := PlanRun(h, state.Empty(), tc.req, "p/r"); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want ErrBadRequest with %q", tc.req, err, tc.want)
		}
	}
}
