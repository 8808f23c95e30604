package server

import (
	"net/http"
)

// Readiness answers /readyz from the same reconcile loop as /healthz: not
// ready until a reconcile has succeeded once, ready from then on. A
// readiness probe on it makes a rollout wait until each new agent has put
// its node's pods on their CPUs and QoS values again; a later failing
// reconcile is /healthz's business (it restarts the agent), not readiness',
// since taking the agent out of a Service helps no pod.
type Readiness struct{ h *Health }

// Readiness returns the /readyz handler of h.
func (h *Health) Readiness() Readiness { return Readiness{h} }

// Ready says whether a reconcile has succeeded since the agent started.
func (h *Health) Ready() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.succeeded > 0
}

// ServeHTTP answers 200 "ok" or 503 with what it waits for.
func (r Readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if !r.h.Ready() {
		r.h.mu.Lock()
		why := "no reconcile has completed yet"
		if r.h.completed > 0 {
			why = "no reconcile has succeeded yet; the latest: " + r.h.lastErr
		}
		r.h.mu.Unlock()
		http.Error(w, "not ready: "+why, http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}
