package nri

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/status"
)

// Start runs the plugin until the returned stop, which waits for it to end.
func (p *Plugin) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// RegisterMetrics registers in reg which path the node is on, and the
// synchronizations made.
func (p *Plugin) RegisterMetrics(reg prometheus.Registerer) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "locus_nri_connected",
		Help: "1 while the agent is registered with the runtime's NRI socket (containers are created pinned); 0 while only the reconcile loop applies decisions, after containers start."},
		func() float64 {
			if p.State().Connected {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "locus_nri_synchronizations_total",
			Help: "Synchronizations with the runtime over NRI (one per connection): each updates the running containers whose values differ."},
			func() float64 { return float64(p.State().Synchronized) }))
}

// Pinning is the status's word on the path the node is on; p nil: the
// plugin is off.
func Pinning(p *Plugin) *status.Pinning {
	if p == nil {
		return &status.Pinning{Path: status.PinAfterStart, Reason: "NRI is off (--nri=false)"}
	}
	s := p.State()
	if s.Connected {
		return &status.Pinning{Path: status.PinAtCreation, Runtime: s.Runtime, Since: s.Since.UTC()}
	}
	return &status.Pinning{Path: status.PinAfterStart, Reason: s.Reason, Since: s.Since.UTC()}
}
