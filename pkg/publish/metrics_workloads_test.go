package publish

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/locus-project/locus/pkg/status"
)

// randomWorkloads is a node's workloads as one status lists them: names
// from a small set (so they come, go and come back), pools, CPUs and memory
// QoS values that change between calls, knobs present or not.
func randomWorkloads(rng *rand.Rand) []status.WorkloadStatus {
	var ws []status.WorkloadStatus
	for i := range 8 {
		if rng.IntN(3) == 0 {
			continue
		}
		w := status.WorkloadStatus{Name: fmt.Sprintf("ns/pod-%d", i), Pool: []string{"shared", "exclusive", "be"}[rng.IntN(3)],
			CPUs: []string{"", "0-1", "2-5", "7"}[rng.IntN(4)], NUMANodes: make([]int, rng.IntN(3))}
		if i%4 == 0 {
			w.Name = fmt.Sprintf("host-%d", i) // no namespace, no pod
		}
		values := map[string]string{}
		for _, knob := range []string{"memory.low", "memory.min", "memory.wmark_ratio", "memory.wmark_min_adj", "memory.high"} {
			switch rng.IntN(3) {
			case 0: // absent
			case 1:
				values[knob] = fmt.Sprint(rng.IntN(4) * 25)
			case 2:
				values[knob] = "max"
			}
		}
		w.MemoryQOS.Values = values
		ws = append(ws, w)
	}
	return ws
}

// exposition is every per-workload series of m, as a scrape reads them.
func exposition(t *testing.T, m *Metrics) string {
	t.Helper()
	var b strings.Builder
	for _, name := range []string{"locus_workload_cpus", "locus_workload_numa_nodes", "locus_workload_memory_qos_bytes",
		"locus_workload_memory_qos_ratio", "locus_workload_memory_wmark_min_adj"} {
		n, err := testutil.GatherAndCount(m.Reg, name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d\n", name, n)
	}
	mfs, err := m.Reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "locus_workload_") {
			for _, s := range mf.GetMetric() {
				fmt.Fprintf(&b, "%s %v %v\n", mf.GetName(), labelsOf(s), s.GetGauge().GetValue())
			}
		}
	}
	return b.String()
}

// TestSetWorkloadsAsIfAfresh: after any sequence of statuses, the series
// are exactly those a fresh registry shows for the last one, though only
// the changed workloads' series are touched: none left of a workload gone,
// of a pool left or of a knob no longer numeric, and every value current.
func TestSetWorkloadsAsIfAfresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	m := NewMetrics("", "")
	for step := range 300 {
		ws := randomWorkloads(rng)
		if step%50 == 49 {
			ws = nil // every workload gone
		}
		m.SetWorkloads(ws)
		fresh := NewMetrics("", "")
		fresh.SetWorkloads(ws)
		if got, want := exposition(t, m), exposition(t, fresh); got != want {
			t.Fatalf("step %d: series after the sequence differ from a fresh registry's:\n%s\nwant:\n%s", step, got, want)
		}
	}
}
