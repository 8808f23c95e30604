package source

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/decide"
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

// PodCPUSets is offered by a source that keeps the cpuset the last decision
// gave each pod's containers (decide.Desired.Unlisted): the NRI plugin
// answers with it a creation the loop did not decide in time, so the
// container is still created on its pod's CPUs. A pod the decision gave no
// such cpuset (container scope, pinned by the kubelet, terminating, not
// decided yet) is not found.
type PodCPUSets interface {
	// PodCPUSet is the cpuset of the pod ref names (by its UID, which the
	// source checks before use); it may be called from any goroutine.
	PodCPUSet(ref PodRef) (decide.PodCPUSet, bool)
}

// PodCPUSetsOf is src's PodCPUSets; nil when it offers none.
func PodCPUSetsOf(src Source) PodCPUSets {
	s, _ := src.(PodCPUSets)
	return s
}

// DeviceReporter is offered by a source that reads the devices its
// workloads hold from elsewhere (the Kubernetes source, from the kubelet's
// PodResources): the status says what it read, or why it could not.
type DeviceReporter interface {
	// DeviceStatus is the last read; it may be called from any goroutine.
	DeviceStatus() status.Devices
}

// Devices is the source's word on the devices its workloads hold; nil on
// a nil Loader (standalone) or a source that reads none.
func (l *Loader) Devices() *status.Devices {
	if l == nil {
		return nil
	}
	r, ok := l.Source.(DeviceReporter)
	if !ok {
		return nil
	}
	d := r.DeviceStatus()
	return &d
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
