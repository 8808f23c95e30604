package balancerloop

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/balancer"
)

// metrics are the NUMA balancer's series, per partition and group.
type metrics struct {
	capacity, predicted, busy, groups, overflow, free *prometheus.GaugeVec
	load, local, placed                               *prometheus.GaugeVec
	moves                                             *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	part := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_numa_balancer_partition_" + name, Help: help}, []string{"partition"})
	}
	grp := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "locus_numa_balancer_group_" + name, Help: help}, append([]string{"group"}, labels...))
	}
	m := &metrics{
		capacity:  part("cpus", "CPUs of the partition in the balanced pool."),
		predicted: part("load_cpus", "Predicted load of the partition: its groups' smoothed loads plus what else runs there, in CPUs."),
		busy:      part("busy_cpus", "CPU time used on the partition's CPUs over the last window, in CPUs."),
		groups:    part("groups", "Groups placed on the partition."),
		overflow:  part("overflow", "1 while the partition's groups overflow into the whole pool."),
		free:      part("memory_free_bytes", "Free memory of the partition's NUMA nodes."),
		load:      grp("load_cpus", "Smoothed CPU use of the group, in CPUs."),
		local:     grp("memory_local_ratio", "Share (0 to 1) of the group's memory on its partitions' nodes."),
		placed:    grp("partition", "1 for each partition the group is placed on.", "partition"),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "locus_numa_balancer_moves_total",
			Help: "Groups placed for the first time (kind placed) or moved (kind moved)."}, []string{"kind"}),
	}
	reg.MustRegister(m.capacity, m.predicted, m.busy, m.groups, m.overflow, m.free, m.load, m.local, m.placed, m.moves)
	return m
}

// observe replaces the series with a decision's, so groups and partitions
// that are gone vanish.
func (m *metrics) observe(d balancer.Plan, in balancer.Input) {
	for _, g := range []*prometheus.GaugeVec{m.capacity, m.predicted, m.busy, m.groups, m.overflow, m.free, m.load, m.local, m.placed} {
		g.Reset()
	}
	busy := map[string]float64{}
	free := map[string]float64{}
	for _, p := range in.Partitions {
		busy[p.Name] = p.Busy
		for _, n := range p.Nodes {
			free[p.Name] += float64(in.Memory[n].Free)
		}
	}
	for _, p := range d.Partitions {
		m.capacity.WithLabelValues(p.Name).Set(p.Capacity)
		m.predicted.WithLabelValues(p.Name).Set(p.Predicted)
		m.busy.WithLabelValues(p.Name).Set(busy[p.Name])
		m.groups.WithLabelValues(p.Name).Set(float64(len(p.Groups)))
		m.overflow.WithLabelValues(p.Name).Set(b2f(p.Overflow))
		m.free.WithLabelValues(p.Name).Set(free[p.Name])
	}
	for _, p := range d.Placements {
		m.load.WithLabelValues(p.Group).Set(p.Load)
		m.local.WithLabelValues(p.Group).Set(float64(p.LocalPercent) / 100)
		for _, part := range p.Partitions {
			m.placed.WithLabelValues(p.Group, part).Set(1)
		}
	}
	for _, mv := range d.Moves {
		kind := "placed"
		if len(mv.From) > 0 {
			kind = "moved"
		}
		m.moves.WithLabelValues(kind).Inc()
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
