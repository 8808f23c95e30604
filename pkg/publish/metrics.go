package publish

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/server"
	"github.com/locus-project/locus/pkg/status"
)

// Metrics are the agent's Prometheus series, in a registry of its own so
// nothing else leaks into /metrics. The per-workload and host check series
// are set from the status; the counters are the agent's to count, and the
// runners register their own series in Reg.
type Metrics struct {
	Reg         *prometheus.Registry
	cpus        *prometheus.GaugeVec
	numaNodes   *prometheus.GaugeVec
	memBytes    *prometheus.GaugeVec
	memPercent  *prometheus.GaugeVec
	Duration    prometheus.Histogram // one reconcile
	Errors      prometheus.Counter   // reconciles that failed
	ConfigErrs  prometheus.Counter   // invalid configs, each distinct error once
	ConfigBad   prometheus.Gauge     // 1 while the config in force is the last good one
	Writes      prometheus.Counter   // cgroup file writes
	Unsupported *prometheus.GaugeVec // by knob the kernel lacks
	hostCheck   *prometheus.GaugeVec
	NodeCPUs    *server.NodeCPUCollector // locus_numa_node_cpus, fed by the /ui map
	NRICreates  *prometheus.CounterVec   // containers the NRI plugin was asked about, by result
}

// NewMetrics registers the agent's series in a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Reg: prometheus.NewRegistry(),
		cpus: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_workload_cpus",
			Help: "CPUs a workload may run on, by pool (exclusive, static-burst, shared, be)."}, []string{"workload", "pool"}),
		numaNodes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_workload_numa_nodes",
			Help: "NUMA nodes a workload's CPUs span."}, []string{"workload"}),
		memBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_workload_memory_qos_bytes",
			Help: "Memory QoS byte values in force (memory.min, memory.low, memory.high, memory.wmark_high), read back from the cgroup."},
			[]string{"workload", "container", "knob"}),
		memPercent: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_workload_memory_qos_ratio",
			Help: "Memory QoS percentages and adjustments in force (memory.wmark_ratio, memory.wmark_min_adj)."},
			[]string{"workload", "container", "knob"}),
		Duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "locus_reconcile_duration_seconds",
			Help: "Time one reconcile takes.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
		Errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "locus_reconcile_errors_total",
			Help: "Reconciles that failed to write a cgroup file or to save state."}),
		ConfigErrs: prometheus.NewCounter(prometheus.CounterOpts{Name: "locus_config_errors_total",
			Help: "Configs found invalid (each distinct error once); the last good config stays in force."}),
		ConfigBad: prometheus.NewGauge(prometheus.GaugeOpts{Name: "locus_config_invalid",
			Help: "1 while the current config is invalid and the last good one is in force."}),
		Writes: prometheus.NewCounter(prometheus.CounterOpts{Name: "locus_cgroup_writes_total",
			Help: "Cgroup file writes made."}),
		Unsupported: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_unsupported_knobs",
			Help: "1 for each cgroup file the kernel lacks (Alibaba Cloud Linux / Anolis extensions)."}, []string{"knob"}),
	}
	m.hostCheck = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_host_check",
		Help: "1 for each host check (locus doctor, run at start) with its status: ok, warn, fail or n/a."}, []string{"check", "status"})
	m.NodeCPUs = server.NewNodeCPUCollector()
	m.NRICreates = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "locus_nri_containers_total",
		Help: "Containers the NRI plugin was asked about, by result: Decided (values given), LastDecision (not decided in time: given its pod's cpuset from the last decision), CreatedUnpinned (started without, fail open), CreationRefused (fail closed)."}, []string{"result"})
	m.Reg.MustRegister(m.NRICreates, m.cpus, m.numaNodes, m.memBytes, m.memPercent, m.Duration, m.Errors, m.ConfigErrs, m.ConfigBad, m.Writes, m.Unsupported, m.hostCheck, m.NodeCPUs)
	// The agent's own heap, goroutines and resident memory (go_*, process_*):
	// what tells a leak from the Go runtime keeping freed memory.
	m.Reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// CountConfigError keeps the config error series: fresh counts a newly
// found invalid config, invalid says whether the current one is.
func (m *Metrics) CountConfigError(fresh, invalid bool) {
	if fresh {
		m.ConfigErrs.Inc()
	}
	v := 0.0
	if invalid {
		v = 1
	}
	m.ConfigBad.Set(v)
}

// SetWorkloads replaces the per-workload series, so removed workloads vanish.
func (m *Metrics) SetWorkloads(ws []status.WorkloadStatus) {
	m.cpus.Reset()
	m.numaNodes.Reset()
	m.memBytes.Reset()
	m.memPercent.Reset()
	for _, w := range ws {
		m.cpus.WithLabelValues(w.Name, w.Pool).Set(float64(cpuCount(w.CPUs)))
		m.numaNodes.WithLabelValues(w.Name).Set(float64(len(w.NUMANodes)))
		for knob, text := range w.MemoryQOS.Values {
			v, err := strconv.ParseFloat(text, 64)
			if err != nil {
				continue // "max" and other non-numbers have no gauge value
			}
			info, _ := memqos.Info(memqos.Knob(knob))
			g := m.memBytes
			if info.Unit == "percent" || info.Unit == "adj" {
				g = m.memPercent
			}
			g.WithLabelValues(w.Name, w.Name, knob).Set(v)
		}
	}
}

// SetHostChecks exports each host check's status.
func (m *Metrics) SetHostChecks(cs []status.HostCheck) {
	m.hostCheck.Reset()
	for _, c := range cs {
		m.hostCheck.WithLabelValues(c.Check, c.Status).Set(1)
	}
}
