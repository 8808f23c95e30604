package burstwatch

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/locus-project/locus/internal/testfs"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/workload"
)

// TestObserve reads the counters and quotas of just the containers whose
// policy raises the quota, and /proc/stat; a container it cannot read is
// left out.
func TestObserve(t *testing.T) {
	root, proc := t.TempDir(), t.TempDir()
	testfs.Write(t, filepath.Join(root, "cpu", "cpu.cfs_burst_us"), "0\n")
	for c, quota := range map[string]string{"pod/a": "50000", "pod/b": "-1"} {
		testfs.Write(t, filepath.Join(root, "cpu", c, "cpu.stat"), "nr_periods 9\nnr_throttled 4\nthrottled_time 100\n")
		testfs.Write(t, filepath.Join(root, "cpu", c, "cpu.cfs_quota_us"), quota+"\n")
	}
	testfs.Write(t, filepath.Join(proc, "stat"), "cpu  10 0 10 80 0 0 0 0 0 0\ncpu0 10 0 10 80 0 0 0 0 0 0\n")
	h, err := cgroup.Open(root, cgroup.V1)
	if err != nil {
		t.Fatal(err)
	}
	w := New(h, proc)
	w.now = func() time.Time { return time.Unix(7, 0) }
	if !w.Kernel() {
		t.Fatal("the burst file was missed")
	}
	cfg := &workload.Config{CPUBurst: cpuburst.NodeConfig{Strategy: cpuburst.Config{Policy: new(cpuburst.CFSQuotaBurst)}}}
	ws := []workload.Workload{{Name: "p", Cgroup: "pod", Containers: []workload.Container{
		{Name: "a", Cgroup: "pod/a", CPULimitMilli: 500}, {Name: "b", Cgroup: "pod/b", CPULimitMilli: 500},
		{Name: "c", Cgroup: "pod/c", CPULimitMilli: 500}, {Name: "d", Cgroup: "pod/d"}}}}
	obs := w.Observe(cfg, ws, nil)
	if obs.Throttled["pod/a"] != 4 || obs.Quota["pod/a"] != 50000 || obs.Quota["pod/b"] != -1 || len(obs.Quota) != 2 {
		t.Errorf("throttled %v quota %v", obs.Throttled, obs.Quota)
	}
	if c := obs.CPUTimes[0]; c.Busy != 20 || c.Total != 100 || !obs.Now.Equal(time.Unix(7, 0)) {
		t.Errorf("cpu times %v, now %v", obs.CPUTimes, obs.Now)
	}
	cfg.CPUBurst = cpuburst.NodeConfig{}
	if obs := w.Observe(cfg, ws, nil); obs.Throttled != nil || obs.CPUTimes != nil {
		t.Errorf("policy none read %v %v", obs.Throttled, obs.CPUTimes)
	}
	var none *Watch
	if none.Kernel() || none.Observe(cfg, ws, nil).Kernel {
		t.Error("a nil watch sees something")
	}
}
