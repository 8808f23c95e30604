package server

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/view"
	"github.com/locus-project/locus/pkg/view/sample"
)

// ui serves the live map of the machine at /ui (read-only, no external
// assets), the map alone at /ui/map.svg, and the snapshot behind both at
// /ui/snapshot.json, which `locus top` reads.
type ui struct {
	c       Config
	sampler *sample.Sampler

	// The topology is read once and again only when the same files as the
	// reconcile's stamp change.
	mu    sync.Mutex
	topo  *topology.Topology
	stamp string
}

func newUI(c Config) *ui {
	u := &ui{c: c, sampler: sample.New(c.ProcRoot, c.SysfsRoot, c.Hierarchy)}
	if c.NodeCPUs != nil {
		c.NodeCPUs.setSource(u.decided)
	}
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
	snap := status.ViewSnapshot(u.c.Status(), t)
	snap.Time, snap.Source = time.Now().UTC(), "agent · "+u.c.ConfigName()
	return snap, nil
}

func (u *ui) topology() (*topology.Topology, error) {
	var sb strings.Builder
	for _, f := range u.c.TopologyFiles {
		raw, _ := os.ReadFile(filepath.Join(u.c.SysfsRoot, f))
		sb.Write(raw)
		sb.WriteByte(0)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.topo != nil && sb.String() == u.stamp {
		return u.topo, nil
	}
	t, err := topology.Discover(u.c.SysfsRoot)
	if err != nil {
		return nil, err
	}
	u.topo, u.stamp = t, sb.String()
	return t, nil
}
