package server

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/status"
)

// Go's profiles are served only when asked for.
func TestProfilingOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		s, err := Start(Config{Addr: "127.0.0.1:0", Metrics: prometheus.NewRegistry(), Health: &Health{},
			Status: func() status.Status { return status.Status{} }, ConfigName: func() string { return "" },
			Log: slog.New(slog.DiscardHandler), Profiling: on})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get("http://" + s.Addr() + "/debug/pprof/goroutine?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.Close()
		if served := resp.StatusCode == http.StatusOK; served != on {
			t.Errorf("profiling %v: /debug/pprof/goroutine answered %d: %.80s", on, resp.StatusCode, body)
		}
	}
}
