package execute

import (
	"fmt"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
)

// BenchmarkWriteAllTrusted is a reconcile's write of 300 pods' cpusets whose
// files are all trusted (the common case under a churn: most pods did not
// change), and the status's read of each file after it. Its bytes are the
// bookkeeping of the trusted files, which nothing writes.
func BenchmarkWriteAllTrusted(b *testing.B) {
	e, _, _, root := newExecutor(b, false)
	now := time.Unix(1000, 0)
	e.c.Pods, e.c.Recheck, e.c.Now = true, time.Hour, func() time.Time { return now }
	tree := map[string]map[string]string{}
	var ops []cgroup.Op
	owner := map[string]string{}
	for i := range 300 {
		cg := fmt.Sprintf("pods/p%03d", i)
		tree[cg] = map[string]string{"cgroup.procs": "", "cpuset.cpus": "2-3", "cpuset.mems": "0"}
		owner[cg] = cg
		ops = append(ops, cgroup.Op{Cgroup: cg, Knob: cgroup.CPUSetMems, Value: "0"},
			cgroup.Op{Cgroup: cg, Knob: cgroup.CPUSetCPUs, Value: "2-3"})
	}
	writeTree(b, root, tree)
	write := func() {
		rep := e.write(ops, nil, owner)
		if len(rep.Errors) > 0 {
			b.Fatal(rep.Errors)
		}
		r := e.Reader(rep.Seen)
		for _, op := range ops {
			if got, err := r.ReadKnob(op.Cgroup, op.Knob); err != nil || got != op.Value {
				b.Fatalf("%s %s read as %q (%v), want %q", op.Cgroup, op.Knob, got, err, op.Value)
			}
		}
	}
	write() // confirms every file
	if rep := e.write(ops, nil, owner); rep.Writes != 0 {
		b.Fatalf("%d files written again: nothing trusted to measure", rep.Writes)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		write()
	}
}

// BenchmarkWriteSharedPoolChange is a reconcile after a shared pool's
// change: 300 pods, each with a container, all of whose cpuset.cpus files
// take the pool's new value, in directories a cgroup watch vouches for (as
// in Kubernetes mode). Every op reaches the writer, which resolves and
// writes each file; its bytes are mostly that resolving.
func BenchmarkWriteSharedPoolChange(b *testing.B) {
	e, _, _, root := newExecutor(b, false)
	now := time.Unix(1000, 0)
	e.c.Pods, e.c.Recheck, e.c.Now = true, time.Hour, func() time.Time { return now }
	e.c.Hierarchy.SetWitness(func(string) (uint64, bool) { return 1, true })
	tree := map[string]map[string]string{}
	owner := map[string]string{}
	for i := range 300 {
		pod := fmt.Sprintf("pods/p%03d", i)
		tree[pod] = map[string]string{"cgroup.procs": "", "cpuset.cpus": "2-5", "cpuset.mems": "0"}
		tree[pod+"/c"] = map[string]string{"cgroup.procs": "", "cpuset.cpus": "2-5", "cpuset.mems": "0"}
		owner[pod], owner[pod+"/c"] = pod, pod
	}
	writeTree(b, root, tree)
	ops := func(cpus string) []cgroup.Op {
		var out []cgroup.Op
		for i := range 300 {
			pod := fmt.Sprintf("pods/p%03d", i)
			out = append(out, cgroup.Op{Cgroup: pod, Knob: cgroup.CPUSetCPUs, Value: cpus},
				cgroup.Op{Cgroup: pod, Knob: cgroup.CPUSetMems, Value: "0"},
				cgroup.Op{Cgroup: pod + "/c", Knob: cgroup.CPUSetCPUs, Value: cpus},
				cgroup.Op{Cgroup: pod + "/c", Knob: cgroup.CPUSetMems, Value: "0"})
		}
		return out
	}
	pools := [2][]cgroup.Op{ops("2-4"), ops("2-5")}
	write := func(i int) {
		defer e.c.Hierarchy.Scope()() // the reconcile's
		rep := e.write(pools[i%2], nil, owner)
		if len(rep.Errors) > 0 || rep.Writes != 600 {
			b.Fatalf("%d files written, want 600: %v", rep.Writes, rep.Errors)
		}
	}
	write(0)
	write(1) // every directory's identity kept under the witness
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		write(i)
		i++
	}
}
