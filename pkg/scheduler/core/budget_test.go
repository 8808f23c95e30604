package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/internal/fuzzseed"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// largest is the largest machine a report can describe: 8,192 CPUs.
var largest = fixture.Shape{Name: "largest", Sockets: 2, NUMAPerSocket: 4, L3PerNUMA: 4, CoresPerSocket: 2048,
	ThreadsPerCore: 2, Siblings: fixture.SiblingsSplit, MemoryPerNode: 64 << 30}

// TestReportOverBudget: the report that made the scheduler hold 2.3 GiB
// (8,192 exclusive holdings of "0-8191") is refused in well under a second
// keeping next to nothing, naming the holding and the budget; the other
// nodes are served all the while.
func TestReportOverBudget(t *testing.T) {
	o := publish(t, twoNode, "bad", reservedCore, nil)
	ct, err := nrt.ReadCPUTopology(o.Metadata.Annotations[nrt.AnnotationCPUTopology])
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxHoldings {
		ct.Exclusive[fmt.Sprintf("ns/p%04d", i)] = "0-8191"
	}
	o.Metadata.Annotations[nrt.AnnotationCPUTopology] = mustJSON(t, ct)
	c := NewCluster()
	c.SetNRT("good", publish(t, twoNode, "good", reservedCore, nil))
	fuzzseed.CheckKept(t, fmt.Sprintf("a report of %d bytes, %d holdings of 0-8191", len(o.Metadata.Annotations[nrt.AnnotationCPUTopology]), maxHoldings),
		1<<20, time.Second, func() any {
			c.SetNRT("bad", o)
			return c
		})
	err = c.ReportError("bad")
	if err == nil || !strings.Contains(err.Error(), `exclusive["ns/p0000"]: 8192 CPUs: more than the 16 left of the budget`) {
		t.Fatalf("bad node: %v", err)
	}
	if v := c.Snapshot().Get("good"); v.Err != nil {
		t.Fatalf("good node: %v", v.Err)
	}
	if _, err := Place(c.Snapshot().Get("good"), 0, req(2, "", 0)); err != nil {
		t.Fatalf("placing on the good node: %v", err)
	}
}

// TestReportAtBudget: a report at its budget is read, and what the
// scheduler keeps of it is measured: the largest machine with every CPU
// held alone, one CPU a pod (8,192 holdings), and a 256-CPU node whose
// every CPU carries maxBurstSharers static-burst pods. One CPU more is
// refused.
func TestReportAtBudget(t *testing.T) {
	excl := map[string]workload.Assignment{}
	for i := range 8192 {
		excl[fmt.Sprintf("ns/p%04d", i)] = workload.Assignment{CPUs: cpuset.New(i), Policy: cpualloc.FullPCPUs}
	}
	big := publish(t, largest, "big", cpuset.New(), excl)
	c := NewCluster()
	fuzzseed.CheckKept(t, "the largest machine, every CPU held alone", 16<<20, 5*time.Second, func() any {
		c.SetNRT("big", big)
		return c.Snapshot()
	})
	if err := c.ReportError("big"); err != nil {
		t.Fatalf("at the exclusive budget: %v", err)
	}

	all := fixture.MustBuild(fixture.AMDNPS1).CPUSet()
	burst := map[string]workload.Assignment{}
	for i := range maxBurstSharers {
		burst[fmt.Sprintf("ns/b%03d", i)] = workload.Assignment{CPUs: all, Policy: cpualloc.StaticBurst, RequestMilli: 1}
	}
	amd := publish(t, fixture.AMDNPS1, "amd", cpuset.New(), burst)
	fuzzseed.CheckKept(t, fmt.Sprintf("%d static-burst holdings of all %d CPUs", maxBurstSharers, all.Size()), 8<<20, 5*time.Second, func() any {
		c.SetNRT("amd", amd)
		return c.Snapshot()
	})
	if err := c.ReportError("amd"); err != nil {
		t.Fatalf("at the static-burst budget: %v", err)
	}

	over := func(o *nrt.Object, edit func(ct *nrt.CPUTopology)) *nrt.Object {
		ct, err := nrt.ReadCPUTopology(o.Metadata.Annotations[nrt.AnnotationCPUTopology])
		if err != nil {
			t.Fatal(err)
		}
		edit(&ct)
		cp := *o
		cp.Metadata.Annotations = map[string]string{nrt.AnnotationCPUTopology: mustJSON(t, ct)}
		return &cp
	}
	c.SetNRT("amd", over(amd, func(ct *nrt.CPUTopology) { ct.StaticBurst["ns/extra"] = nrt.Burst{CPUs: "0", RequestMilli: 1} }))
	if err := c.ReportError("amd"); err == nil || !strings.Contains(err.Error(), `staticBurst["ns/extra"].cpus: 1 CPUs: more than the 0 left`) {
		t.Fatalf("one static-burst CPU over: %v", err)
	}
	c.SetNRT("big", over(big, func(ct *nrt.CPUTopology) { ct.Exclusive["ns/p0000"] = "0-1" }))
	if err := c.ReportError("big"); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Fatalf("one exclusive CPU over: %v", err)
	}
}
