// Package server serves what the agent publishes over HTTP: /metrics,
// /healthz, /status and the /ui map of the machine. It reads the agent only
// through the functions and values it is started with, and never writes.
package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/status"
)

// Config is what the server reads from.
type Config struct {
	Addr     string // "" serves nothing
	Metrics  prometheus.Gatherer
	NodeCPUs *NodeCPUCollector // fed from the map, so it agrees with /ui; may be nil
	Health   *Health
	// Status returns the last status; ConfigName names the config in force.
	Status     func() status.Status
	ConfigName func() string
	// The map discovers the topology itself (the agent's belongs to the
	// reconcile goroutine), again whenever TopologyFiles change.
	SysfsRoot, ProcRoot string
	TopologyFiles       []string
	Hierarchy           *cgroup.Hierarchy
	Log                 *slog.Logger
	// Profiling serves Go's profiles under /debug/pprof/ (CPU, heap,
	// goroutines, traces): off by default, as they show the agent's memory.
	Profiling bool
}

// Server is a running server; the zero Server serves nothing.
type Server struct {
	srv  *http.Server
	addr string // where it listens
}

// Close stops serving.
func (s *Server) Close() {
	if s != nil && s.srv != nil {
		_ = s.srv.Close()
	}
}

// Addr is where it listens ("" when it serves nothing).
func (s *Server) Addr() string { return s.addr }

// Start listens on c.Addr. A busy port is an error that says what to do,
// returned before the agent changes anything.
func Start(c Config) (*Server, error) {
	if c.Addr == "" {
		return &Server{}, nil
	}
	ln, err := net.Listen("tcp", c.Addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("metrics address %s is already in use (another locus agent?): choose one with --metrics-addr, or --metrics-addr \"\" to serve none", c.Addr)
	}
	if err != nil {
		return nil, fmt.Errorf("metrics address %s: %w", c.Addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(c.Metrics, promhttp.HandlerOpts{}))
	mux.Handle("/healthz", c.Health)
	mux.HandleFunc("/status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(c.Status())
	})
	newUI(c).register(mux)
	if c.Profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, addr: ln.Addr().String()}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			c.Log.Error("metrics server", "err", err)
		}
	}()
	c.Log.Info("serving metrics", "addr", ln.Addr().String())
	return s, nil
}
