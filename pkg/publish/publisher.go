package publish

import (
	"slices"
	"sync"

	"github.com/locus-project/locus/pkg/status"
)

// Publisher holds the last status, for /status, and publishes each new one.
type Publisher struct {
	dir     string // the state directory status.json is written to
	metrics *Metrics

	mu      sync.Mutex
	current status.Status
	enc     status.Encoder // status.json as last written, without its time
}

// NewPublisher publishes to status.json under stateDir and to m.
func NewPublisher(stateDir string, m *Metrics) *Publisher {
	return &Publisher{dir: stateDir, metrics: m}
}

// Publish publishes a reconcile's status: /status always, the metrics and
// status.json only when something besides the time changed, so that a
// resync at rest writes nothing. The file's time is thus when the status
// last changed. It is called from one goroutine at a time.
func (p *Publisher) Publish(st status.Status) error {
	p.mu.Lock()
	p.current = st
	p.mu.Unlock()
	raw, changed, err := p.enc.Encode(st)
	if err != nil || !changed {
		return err
	}
	p.metrics.SetWorkloads(st.Workloads)
	if err := status.WriteEncoded(p.dir, raw); err != nil {
		return err
	}
	p.enc.Saved()
	return nil
}

// Current is the status last published.
func (p *Publisher) Current() status.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.current
}

// Forget writes status.json once more without the workloads named, which
// the agent stopped on its way out; it writes nothing when none is named or
// nothing was published. /status keeps the status last published.
func (p *Publisher) Forget(names []string) error {
	st := p.Current()
	var left []status.WorkloadStatus
	for _, w := range st.Workloads {
		if !slices.Contains(names, w.Name) {
			left = append(left, w)
		}
	}
	if st.Workloads = left; len(names) == 0 || st.Time.IsZero() {
		return nil
	}
	return status.Write(p.dir, st)
}
