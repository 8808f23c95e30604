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
	// Addr serves /metrics, /healthz and /readyz, for a scraper and the
	// liveness and readiness probes, and, unless StatusAddr is another address, /status and /ui
	// too ("" serves nothing there).
	Addr string
	// StatusAddr, when set and not Addr, serves /status, /ui and the
	// profiles (and /metrics, /healthz), leaving Addr scrape-only: they
	// name every workload, its cgroups, processes and QoS values, so they
	// belong on loopback, where only the host (or, in a pod, the pod
	// itself, kubectl exec and kubectl port-forward) reaches them.
	StatusAddr string
	Metrics    prometheus.Gatherer
	NodeCPUs   *NodeCPUCollector // fed from the map, so it agrees with /ui; may be nil
	Health     *Health
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
	srvs             []*http.Server
	addr, statusAddr string // where each listens
}

// Close stops serving.
func (s *Server) Close() {
	if s == nil {
		return
	}
	for _, srv := range s.srvs {
		_ = srv.Close()
	}
}

// Addr is where /metrics is served ("" when nowhere).
func (s *Server) Addr() string { return s.addr }

// StatusAddr is where /status is served ("" when nowhere).
func (s *Server) StatusAddr() string { return s.statusAddr }

// Start listens on c.Addr and c.StatusAddr. A busy port is an error that
// says what to do, returned before the agent changes anything.
func Start(c Config) (*Server, error) {
	s := &Server{}
	if c.Addr == "" && c.StatusAddr == "" {
		return s, nil
	}
	scrape, all := http.NewServeMux(), http.NewServeMux()
	for _, mux := range []*http.ServeMux{scrape, all} {
		mux.Handle("/metrics", promhttp.HandlerFor(c.Metrics, promhttp.HandlerOpts{}))
		mux.Handle("/healthz", c.Health)
		mux.Handle("/readyz", c.Health.Readiness())
	}
	registerStatus(all, c)
	status := c.StatusAddr
	if status == "" || status == c.Addr {
		scrape, status = all, "" // one listener serves everything
	}
	for _, l := range []struct {
		addr, flag string
		mux        *http.ServeMux
		where      *string
	}{{c.Addr, "--metrics-addr", scrape, &s.addr}, {status, "--status-addr", all, &s.statusAddr}} {
		if l.addr == "" {
			continue
		}
		ln, err := listen(l.addr, l.flag)
		if err != nil {
			s.Close()
			return nil, err
		}
		srv := &http.Server{Handler: l.mux, ReadHeaderTimeout: 5 * time.Second}
		s.srvs = append(s.srvs, srv)
		*l.where = ln.Addr().String()
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				c.Log.Error("metrics server", "err", err)
			}
		}()
	}
	if status == "" {
		s.statusAddr = s.addr
	}
	c.Log.Info("serving metrics", "addr", s.addr, "status", s.statusAddr)
	return s, nil
}

func listen(addr, flag string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s %s is already in use (another locus agent?): choose another, or %s \"\" to serve none", flag, addr, flag)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, addr, err)
	}
	return ln, nil
}

// registerStatus adds what tells about the workloads: /status, /ui and,
// when asked for, Go's profiles.
func registerStatus(mux *http.ServeMux, c Config) {
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
}
