package publish

import (
	"cmp"
	"runtime"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

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
	memRatio    *prometheus.GaugeVec // percent knobs, as 0-1
	wmarkMinAdj *prometheus.GaugeVec
	build       *prometheus.GaugeVec
	Duration    prometheus.Histogram // one reconcile
	Errors      prometheus.Counter   // reconciles that failed
	ConfigErrs  prometheus.Counter   // invalid configs, each distinct error once
	ConfigBad   prometheus.Gauge     // 1 while the config in force is the last good one
	Writes      prometheus.Counter   // cgroup file writes
	Moves       prometheus.Counter   // workloads moved so that another fits
	Unsupported *prometheus.GaugeVec // by knob the kernel lacks
	hostCheck   *prometheus.GaugeVec
	NodeCPUs    *server.NodeCPUCollector // locus_numa_node_cpus, fed by the /ui map
	NRICreates  *prometheus.CounterVec   // containers the NRI plugin was asked about, by result
	NRIAnswers  *prometheus.HistogramVec // how long a creation waited for its answer, by stage

	lastMu sync.Mutex
	last   map[string]madeSeries // the per-workload series set, by workload (SetWorkloads)
}

// WorkloadLabels are the labels of every per-workload series, then more: the
// agent's name for the workload, and for a pod its namespace and name, which
// kube-state-metrics uses too (empty, i.e. absent, for a host workload). There
// is no container label: these values are the pod's cgroup's, and a scrape
// target's own container label must not be taken for the workload's.
func WorkloadLabels(more ...string) []string {
	return append([]string{"workload", "namespace", "pod"}, more...)
}

// WorkloadLabelValues are WorkloadLabels' values for the workload name.
func WorkloadLabelValues(name string, more ...string) []string {
	ns, pod := status.PodOf(name)
	return append([]string{name, ns, pod}, more...)
}

// NewMetrics registers the agent's series in a new registry; version and
// commit name the build in locus_build_info ("": unknown).
func NewMetrics(version, commit string) *Metrics {
	m := &Metrics{
		Reg: prometheus.NewRegistry(),
		cpus: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_workload_cpus",
			Help: "CPUs a workload may run on, by pool (exclusive, static-burst, shared, be)."}, WorkloadLabels("pool")),
		numaNodes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_workload_numa_nodes",
			Help: "NUMA nodes a workload's CPUs span."}, WorkloadLabels()),
		memBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_workload_memory_qos_bytes",
			Help: "Memory QoS byte values in force (memory.min, memory.low, memory.high, memory.wmark_high), read back from the cgroup."},
			WorkloadLabels("knob")),
		memRatio: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_workload_memory_qos_ratio",
			Help: "Memory QoS percentages in force as a ratio from 0 to 1 (memory.wmark_ratio 95 is 0.95), read back from the cgroup."},
			WorkloadLabels("knob")),
		wmarkMinAdj: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_workload_memory_wmark_min_adj",
			Help: "memory.wmark_min_adj in force (-25 to 50: how much lower or higher than the global min watermark the workload's is), read back from the cgroup."},
			WorkloadLabels()),
		build: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_build_info",
			Help: "1, with the agent's version, commit and Go version as labels."}, []string{"version", "commit", "goversion"}),
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
		Moves: prometheus.NewCounter(prometheus.CounterOpts{Name: "locus_workload_moves_total",
			Help: "Workloads moved to other CPUs (and their memory to those CPUs' nodes) so that another fits on the NUMA nodes it needs."}),
		Unsupported: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_unsupported_knobs",
			Help: "1 for each cgroup file the kernel lacks (Alibaba Cloud Linux / Anolis extensions)."}, []string{"knob"}),
	}
	m.hostCheck = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_host_check",
		Help: "1 for each host check (locus doctor, run at start) with its status: ok, warn, fail or n/a."}, []string{"check", "status"})
	m.NodeCPUs = server.NewNodeCPUCollector()
	m.NRICreates = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "locus_nri_containers_total",
		Help: "Containers the NRI plugin was asked about, by result: Decided (values given), LastDecision (not decided in time: given its pod's cpuset from the last decision), CreatedUnpinned (started without, fail open), CreationRefused (fail closed)."}, []string{"result"})
	m.NRIAnswers = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "locus_nri_answer_seconds",
		Help:    "How long the runtime waited for the NRI plugin's answer about a container, by stage: queued (until the agent's loop took it up), answered (until the answer).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 12)}, []string{"stage"})
	m.setBuild(version, commit)
	m.Reg.MustRegister(m.NRIAnswers, m.NRICreates, m.build, m.cpus, m.numaNodes, m.memBytes, m.memRatio, m.wmarkMinAdj, m.Duration, m.Errors, m.ConfigErrs, m.ConfigBad, m.Writes, m.Moves, m.Unsupported, m.hostCheck, m.NodeCPUs)
	// The agent's own heap, goroutines and resident memory (go_*, process_*):
	// what tells a leak from the Go runtime keeping freed memory.
	m.Reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) setBuild(version, commit string) {
	m.build.WithLabelValues(cmp.Or(version, "unknown"), cmp.Or(commit, "unknown"), runtime.Version()).Set(1)
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

// SetHostChecks exports each host check's status.
func (m *Metrics) SetHostChecks(cs []status.HostCheck) {
	m.hostCheck.Reset()
	for _, c := range cs {
		m.hostCheck.WithLabelValues(c.Check, c.Status).Set(1)
	}
}
