package localityloop

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/publish"
	"github.com/locus-project/locus/pkg/status"
)

// Metrics are the memory locality series. They outlive a Runner: the agent
// registers them once, at its start.
type Metrics struct {
	ratio    *prometheus.GaugeVec
	migrated *prometheus.CounterVec
	duration prometheus.Histogram
	stall    *prometheus.GaugeVec
}

// NewMetrics registers the series with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		ratio: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_memory_local_ratio",
			Help: "Share (0 to 1) of a workload's memory pages on the NUMA nodes of its CPUs, after its last memory locality run."},
			publish.WorkloadLabels()),
		migrated: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "locus_memory_pages_migrated_total",
			Help: "Base pages (4 KiB) moved from remote NUMA nodes to a workload's local ones."}, publish.WorkloadLabels()),
		// Migrations take from a millisecond (nothing remote) to minutes
		// (many GiB over a loaded interconnect).
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "locus_memory_migration_duration_seconds",
			Help:    "Time one memory locality run takes, measuring before and after included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
		stall: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_memory_migration_longest_stall_seconds",
			Help: "Longest single page-moving call of a workload's last memory locality run: the longest the workload may have waited on a page."},
			publish.WorkloadLabels()),
	}
	reg.MustRegister(m.ratio, m.migrated, m.duration, m.stall)
	return m
}

// observe records one run; migrated is false when the run was decided
// without touching memory (nothing to do on this machine).
func (m *Metrics) observe(name string, s status.LocalityStatus, runs []containerRun, migrated bool, took time.Duration) {
	if s.LocalRatio != nil {
		m.ratio.WithLabelValues(publish.WorkloadLabelValues(name)...).Set(float64(*s.LocalRatio) / 100)
	}
	m.migrated.WithLabelValues(publish.WorkloadLabelValues(name)...).Add(float64(s.PagesMigrated))
	if !migrated {
		return
	}
	m.duration.Observe(took.Seconds())
	var longest time.Duration
	for _, r := range runs {
		if r.Err == nil {
			longest = max(longest, r.Result.LongestStall)
		}
	}
	m.stall.WithLabelValues(publish.WorkloadLabelValues(name)...).Set(longest.Seconds())
}

// forget drops a workload's series once memory locality no longer applies
// to it.
func (m *Metrics) forget(name string) {
	l := publish.WorkloadLabelValues(name)
	m.ratio.DeleteLabelValues(l...)
	m.migrated.DeleteLabelValues(l...)
	m.stall.DeleteLabelValues(l...)
}
