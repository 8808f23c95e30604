package source

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/locus-project/locus/pkg/status"
)

// watching is a source with a cgroup watch.
type watching struct {
	fixed
	cw status.CgroupWatch
}

func (w *watching) CgroupWatch() status.CgroupWatch { return w.cw }

// A source's cgroup watch reaches the status's pinning and the metric of
// early writes, which follows it; a source without one adds neither.
func TestWatcherMetricAndPinning(t *testing.T) {
	src := &watching{cw: status.CgroupWatch{Watched: 5, EarlyWrites: 3}}
	reg := prometheus.NewRegistry()
	l := NewLoader(src, reg)
	if got, err := testutil.GatherAndCount(reg, "locus_cgroup_early_writes_total"); err != nil || got != 1 {
		t.Fatalf("locus_cgroup_early_writes_total: %d series, %v", got, err)
	}
	src.cw.EarlyWrites = 7
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetMetric()[0].GetCounter().GetValue() != 7 {
		t.Errorf("after 7 early writes: %v %v", mfs, err)
	}
	p := l.Pinning(&status.Pinning{Path: status.PinAfterStart})
	if p.CgroupWatch == nil || *p.CgroupWatch != (status.CgroupWatch{Watched: 5, EarlyWrites: 7}) {
		t.Errorf("pinning's cgroup watch: %+v", p.CgroupWatch)
	}
	if l.Pinning(nil) != nil {
		t.Error("no pinning (outside Kubernetes mode) became one")
	}

	reg = prometheus.NewRegistry()
	plain := NewLoader(&fixed{}, reg)
	if got, _ := testutil.GatherAndCount(reg); got != 0 {
		t.Errorf("a source without a watch registered %d series", got)
	}
	if p := plain.Pinning(&status.Pinning{Path: status.PinAfterStart}); p.CgroupWatch != nil {
		t.Errorf("a source without a watch: %+v", p.CgroupWatch)
	}
}
