package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

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

func startTest(t *testing.T, addr, statusAddr string) *Server {
	t.Helper()
	s, err := Start(Config{Addr: addr, StatusAddr: statusAddr, Metrics: prometheus.NewRegistry(),
		Health: NewHealth(time.Now, time.Minute), Status: func() status.Status { return status.Status{} },
		ConfigName: func() string { return "" }, Log: slog.New(slog.DiscardHandler), Profiling: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func code(t *testing.T, addr, path string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// With a status address of its own, the metrics address serves only what
// a scraper and a liveness probe read; /status, /ui and the profiles,
// which name every workload, its cgroups and processes, are served on the
// status address alone. Without one (or the same), one address serves all.
func TestStatusOnlyOnTheStatusAddress(t *testing.T) {
	split := startTest(t, "[127.0.0.2]:0", "127.0.0.1:0") // the chart's form: [$(POD_IP)]:PORT
	one := startTest(t, "127.0.0.1:0", "")
	if split.Addr() == split.StatusAddr() || one.Addr() != one.StatusAddr() {
		t.Fatalf("addresses: split %s and %s, one %s and %s", split.Addr(), split.StatusAddr(), one.Addr(), one.StatusAddr())
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz", "/status", "/ui", "/ui/snapshot.json", "/ui/map.svg", "/debug/pprof/goroutine"} {
		scrapeOnly := path == "/metrics" || path == "/healthz" || path == "/readyz"
		for _, tc := range []struct {
			addr   string
			served bool
		}{{split.Addr(), scrapeOnly}, {split.StatusAddr(), true}, {one.Addr(), true}} {
			got := code(t, tc.addr, path)
			if served := got != http.StatusNotFound; served != tc.served {
				t.Errorf("%s%s: %d, want served %v", tc.addr, path, got, tc.served)
			}
		}
	}
	if _, err := Start(Config{Addr: split.StatusAddr(), Log: slog.New(slog.DiscardHandler)}); err == nil {
		t.Error("a busy address was taken")
	} else if want := fmt.Sprintf("--metrics-addr %s is already in use", split.StatusAddr()); !strings.Contains(err.Error(), want) {
		t.Errorf("busy address: %v, want %q", err, want)
	}
}
