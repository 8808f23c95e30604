package agent

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/view"
	"github.com/locus-project/locus/pkg/view/sample"
)

// ui serves the live map of the machine at /ui (read-only, no external
// assets), the map alone at /ui/map.svg, and the snapshot behind both at
// /ui/snapshot.json, which `locus top` reads.
type ui struct {
	a       *Agent
	sampler *sample.Sampler

	// The topology is discovered here again, not taken from the agent: the
	// agent's belongs to the reconcile goroutine. It is read once and again
	// only when the same four files as the reconcile's stamp change.
	mu    sync.Mutex
	topo  *topology.Topology
	stamp string
}

func (a *Agent) newUI() *ui {
	u := &ui{a: a, sampler: sample.New(a.opts.ProcRoot, a.opts.SysfsRoot, a.h)}
	a.metrics.nodeCPUs.setSource(u.decided)
	return u
}

func (u *ui) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui", u.page)
	mux.HandleFunc("GET /ui/{$}", u.page)
	mux.HandleFunc("GET /ui/map.svg", u.svg)
	mux.HandleFunc("GET /ui/snapshot.json", u.json)
}

func (u *ui) page(w http.ResponseWriter, _ *http.Request) {
	snap, err := u.snapshot()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(view.Page("locus · "+snap.Source, view.SVG(&snap)))
}

func (u *ui) svg(w http.ResponseWriter, _ *http.Request) {
	snap, err := u.snapshot()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(view.SVG(&snap))
}

func (u *ui) json(w http.ResponseWriter, _ *http.Request) {
	snap, err := u.snapshot()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(snap)
}

// snapshot is the last status on the topology, with what the host uses now.
func (u *ui) snapshot() (view.Snapshot, error) {
	snap, err := u.decided()
	if err != nil {
		return snap, err
	}
	u.sampler.Fill(&snap)
	return snap, nil
}

// decided is the last status on the topology, without usage: what the
// per-node CPU metric counts.
func (u *ui) decided() (view.Snapshot, error) {
	t, err := u.topology()
	if err != nil {
		return view.Snapshot{}, err
	}
	u.a.statusMu.Lock()
	st := u.a.status
	u.a.statusMu.Unlock()
	snap := ViewSnapshot(st, t)
	snap.Time, snap.Source = time.Now().UTC(), "agent · "+u.a.configName()
	return snap, nil
}

func (u *ui) topology() (*topology.Topology, error) {
	var sb strings.Builder
	for _, f := range topologyFiles {
		raw, _ := os.ReadFile(filepath.Join(u.a.opts.SysfsRoot, f))
		sb.Write(raw)
		sb.WriteByte(0)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.topo != nil && sb.String() == u.stamp {
		return u.topo, nil
	}
	t, err := topology.Discover(u.a.opts.SysfsRoot)
	if err != nil {
		return nil, err
	}
	u.topo, u.stamp = t, sb.String()
	return t, nil
}

// ViewSnapshot is an agent's status drawn on topology t, for the views (no
// usage yet: a sample.Sampler adds it). A status without a time (no
// reconcile yet) owns nothing.
func ViewSnapshot(st Status, t *topology.Topology) view.Snapshot {
	snap := view.Snapshot{Time: st.Time, Agent: !st.Time.IsZero(), Topology: t,
		Pools: view.Pools{Reserved: st.Node.Reserved, Exclusive: st.Node.Exclusive, Shared: st.Node.Shared, BE: st.Node.BE}}
	switch {
	case st.ConfigError != "":
		snap.Note = "config error (last good config in force): " + st.ConfigError
	case len(st.Node.Problems) > 0:
		snap.Note = "node problem: " + strings.Join(st.Node.Problems, "; ")
	}
	for _, ws := range st.Workloads {
		w := view.Workload{Name: ws.Name, Cgroup: ws.Cgroup, QOSClass: ws.QOSClass, Pool: ws.Pool, CPUs: ws.CPUs,
			NUMANodes: ws.NUMANodes, PIDs: len(ws.PIDs), Problems: ws.Problems}
		if m := ws.MemoryLocality; m != nil {
			w.Migration = &view.Migration{Time: m.Time, Reason: m.Reason, LocalRatio: m.LocalRatio, PagesMigrated: m.PagesMigrated}
		}
		snap.Workloads = append(snap.Workloads, w)
	}
	return snap
}
