package scale

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"k8s.io/component-base/metrics/legacyregistry"
)

// schedulerMetrics are the metric families of the scheduler of kind k: the
// process's registry for the two that run in it (both register there), or
// what koord-scheduler serves on /metrics. Before koord-scheduler has
// started (s nil) it has counted nothing: no families.
func schedulerMetrics(t testing.TB, k kind, s scheduler) []*dto.MetricFamily {
	t.Helper()
	if k != koord {
		families, _ := legacyregistry.DefaultGatherer.Gather()
		return families
	}
	p, ok := s.(*koordProcess)
	if !ok || p == nil {
		return nil
	}
	families, err := p.metrics()
	if err != nil {
		t.Logf("koord-scheduler's metrics: %v (its attempt figures will read zero)", err)
	}
	return families
}

// metrics reads koord-scheduler's /metrics from its secure port, which
// serves it to anyone (--authorization-always-allow-paths) with a
// certificate of its own making.
func (p *koordProcess) metrics() ([]*dto.MetricFamily, error) {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		// Its own self-signed certificate, on the loopback.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", p.port), nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET /metrics: %s: %s", resp.Status, body)
	}
	var parser expfmt.TextParser
	byName, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	out := make([]*dto.MetricFamily, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	return out, nil
}

// freePort is a loopback TCP port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
