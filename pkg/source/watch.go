package source

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/status"
)

// Watcher is offered by a source that watches its pods' cgroups and gives a
// new container its pod's cpuset as its cgroup appears (the Kubernetes
// source, pkg/kube/earlypin): the status's pinning and a metric say how it
// goes.
type Watcher interface {
	// CgroupWatch is the watch as it stands; it may be called from any
	// goroutine.
	CgroupWatch() status.CgroupWatch
}

// registerMetrics registers in reg the metrics of what src offers.
func registerMetrics(reg prometheus.Registerer, src Source) {
	w, ok := src.(Watcher)
	if !ok || reg == nil {
		return
	}
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "locus_cgroup_early_writes_total",
		Help: "Containers given their pod's cpuset as their cgroup appeared (the cgroup watch), before the pod's status listed them."},
		func() float64 { return float64(w.CgroupWatch().EarlyWrites) }))
}

// Pinning adds to p, the status's word on the path the node is on, the
// source's watch of new containers' cgroups, when it has one.
func (l *Loader) Pinning(p *status.Pinning) *status.Pinning {
	if w, ok := l.Source.(Watcher); ok && p != nil {
		cw := w.CgroupWatch()
		p.CgroupWatch = &cw
	}
	return p
}
