package server

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/view"
)

// NodeCPUCollector exports locus_numa_node_cpus: each NUMA node's CPUs by
// what they are used for, every CPU counted once. It is computed when
// scraped, from the last status on the topology the map draws, so it always
// agrees with /ui.
type NodeCPUCollector struct {
	desc   *prometheus.Desc
	source atomic.Pointer[func() (view.Snapshot, error)]
}

// NewNodeCPUCollector makes the collector; it exports nothing until a
// server is started with it.
func NewNodeCPUCollector() *NodeCPUCollector {
	return &NodeCPUCollector{desc: prometheus.NewDesc("locus_numa_node_cpus",
		"CPUs of a NUMA node by use: exclusive (bound to one workload), static-burst, shared (pool), be (the BE pool where narrower than the shared one), reserved, idle (isolated or in no pool).",
		[]string{"numa_node", "pool"}, nil)}
}

// setSource sets where the collector reads the status from (the /ui
// server's); until then it exports nothing.
func (c *NodeCPUCollector) setSource(f func() (view.Snapshot, error)) { c.source.Store(&f) }

// Describe and Collect make it a prometheus.Collector.
func (c *NodeCPUCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *NodeCPUCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.source.Load()
	if src == nil {
		return
	}
	snap, err := (*src)()
	if err != nil || !snap.Agent {
		return // no topology or no decision yet: no figures rather than wrong ones
	}
	for node, kinds := range view.NodeCPUs(&snap) {
		for kind, n := range kinds {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), strconv.Itoa(node), string(kind))
		}
	}
}
