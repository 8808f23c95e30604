package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/publish"
)

// metrics are the publisher's series, and on its registry the runners'
// own: reg and writes are what the runners are handed.
type metrics struct {
	*publish.Metrics
	reg    *prometheus.Registry
	writes prometheus.Counter
}

func newMetrics() *metrics {
	m := publish.NewMetrics()
	return &metrics{Metrics: m, reg: m.Reg, writes: m.Writes}
}
