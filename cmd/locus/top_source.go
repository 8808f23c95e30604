package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/locus-project/locus/pkg/boundedread"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/view"
	"github.com/locus-project/locus/pkg/view/sample"
)

// snapshotSource gets snapshots from the agent's /ui/snapshot.json, or,
// when no agent answers, reads the host itself: the topology, the status
// file an agent left, and what the host uses.
type snapshotSource struct {
	agentAddr  string // "" never asks an agent
	stateDir   string
	sysfsRoot  string
	procRoot   string
	cgroupRoot string
	version    cgroup.Version
	client     *http.Client

	// For reading the host: opened at the first snapshot without an agent.
	sampler *sample.Sampler
	topo    *topology.Topology
	online  string // devices/system/cpu/online when topo was discovered
}

func (s *snapshotSource) fetch() (view.Snapshot, error) {
	if s.agentAddr == "" {
		return s.host("")
	}
	snap, err := s.fromAgent()
	if err == nil {
		return snap, nil
	}
	return s.host(fmt.Sprintf("no agent at %s (%v): showing the host", s.agentAddr, err))
}

func (s *snapshotSource) fromAgent() (view.Snapshot, error) {
	if s.client == nil {
		s.client = &http.Client{Timeout: 900 * time.Millisecond}
	}
	resp, err := s.client.Get("http://" + s.agentAddr + "/ui/snapshot.json")
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the repeated URL
		}
		return view.Snapshot{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return view.Snapshot{}, fmt.Errorf("agent answered %s", resp.Status)
	}
	var snap view.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&snap); err != nil {
		return view.Snapshot{}, fmt.Errorf("agent snapshot: %w", err)
	}
	if snap.Topology == nil {
		return view.Snapshot{}, errors.New("agent snapshot has no topology")
	}
	snap.Source = "agent " + s.agentAddr
	return snap, nil
}

// host reads the machine directly; note says why.
func (s *snapshotSource) host(note string) (view.Snapshot, error) {
	if err := s.openHost(); err != nil {
		return view.Snapshot{}, err
	}
	snap := view.Snapshot{Time: time.Now().UTC(), Topology: s.topo}
	st, err := status.Read(s.stateDir)
	switch {
	case err == nil:
		snap = status.ViewSnapshot(st, s.topo)
		snap.Time = time.Now().UTC()
		if note == "" {
			note = "from the agent's status file"
		}
		note += fmt.Sprintf(" (status of %s)", st.Time.Local().Format("15:04:05"))
	case !errors.Is(err, fs.ErrNotExist):
		note += fmt.Sprintf(" (status file: %v)", err)
	}
	snap.Source, snap.Note = "host", note
	s.sampler.Fill(&snap)
	return snap, nil
}

// openHost discovers the topology again whenever the online CPUs change,
// and opens the cgroup hierarchy once (none, when it cannot be opened:
// workloads then show no usage).
func (s *snapshotSource) openHost() error {
	online, _ := boundedread.File(filepath.Join(s.sysfsRoot, "devices/system/cpu/online"), 64<<10)
	if s.topo == nil || string(online) != s.online {
		t, err := topology.Discover(s.sysfsRoot)
		if err != nil {
			return err
		}
		s.topo, s.online = t, string(online)
	}
	if s.sampler == nil {
		h, err := cgroup.Open(s.cgroupRoot, s.version)
		if err != nil {
			h = nil
		}
		s.sampler = sample.New(s.procRoot, s.sysfsRoot, h)
	}
	return nil
}
