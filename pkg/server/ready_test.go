package server

import (
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/status"
)

// /readyz stays 503 until a reconcile succeeds (a failed one does not count),
// and then 200, even when a later reconcile fails: readiness means "reconciled
// once", and /healthz alone restarts a failing agent. It is served on the
// scrape-only address, where the kubelet's probe reaches it.
func TestReadyOnceReconciled(t *testing.T) {
	h := NewHealth(time.Now, time.Minute)
	srv, err := Start(Config{Addr: "[127.0.0.2]:0", StatusAddr: "127.0.0.1:0", Metrics: prometheus.NewRegistry(), Health: h,
		Status: func() status.Status { return status.Status{} }, ConfigName: func() string { return "" },
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	steps := []struct {
		name string
		run  func()
		want int
	}{
		{"started", func() {}, http.StatusServiceUnavailable},
		{"running", h.Begin, http.StatusServiceUnavailable},
		{"failed", func() { h.End([]error{errors.New("write cpuset.cpus: no such file")}) }, http.StatusServiceUnavailable},
		{"succeeded", func() { h.Begin(); h.End(nil) }, http.StatusOK},
		{"failed again", func() { h.Begin(); h.End([]error{errors.New("write memory.min: EBUSY")}) }, http.StatusOK},
	}
	for _, st := range steps {
		st.run()
		if got := code(t, srv.Addr(), "/readyz"); got != st.want {
			t.Errorf("%s: /readyz answered %d, want %d", st.name, got, st.want)
		}
	}
}
