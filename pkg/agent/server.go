package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// server serves /metrics, /healthz, /status and the /ui map (ui.go).
type server struct {
	srv  *http.Server
	addr string // where it listens
}

func (s *server) close() {
	if s != nil && s.srv != nil {
		_ = s.srv.Close()
	}
}

// serve listens on addr ("" serves nothing). A busy port is an error that
// says what to do, before the agent changes anything.
func (a *Agent) serve(addr string) (*server, error) {
	if addr == "" {
		return &server{}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("metrics address %s is already in use (another locus agent?): choose one with --metrics-addr, or --metrics-addr \"\" to serve none", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("metrics address %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(a.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", a.health.serveHTTP)
	mux.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) {
		a.statusMu.Lock()
		st := a.status
		a.statusMu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(st)
	})
	a.newUI().register(mux)
	s := &server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, addr: ln.Addr().String()}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics server", "err", err)
		}
	}()
	a.log.Info("serving metrics", "addr", ln.Addr().String())
	return s, nil
}
