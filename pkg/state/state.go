// Package state keeps the agent's checkpoint under --state-dir: the CPU
// assignments in force, the cgroups and processes the agent owns, and the
// leases of `locus run`. Every change replaces the file atomically under an
// exclusive lock, so a kill -9 at any instant leaves the old or the new state,
// and `locus run` and the agent never allocate the same CPUs.
package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/atomicfile"
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/workload"
)

// FormatVersion is bumped when the file changes incompatibly.
const FormatVersion = 1

// Checkpoint is the whole durable state.
type Checkpoint struct {
	Version     int                            `json:"version"`
	Assignments map[string]workload.Assignment `json:"assignments"`
	Workloads   map[string]Workload            `json:"workloads"`
	Leases      map[string]Lease               `json:"leases"`
	// QuotaRaises are the CFS quotas CPU Burst raised, by container cgroup,
	// so that an agent restarted meanwhile brings them back to the base.
	QuotaRaises map[string]cpuburst.Raise `json:"quotaRaises,omitempty"`
	// CoreIsolated are the workloads whose processes were given a core
	// scheduling cookie of their own, so that an agent restarted meanwhile
	// still takes it back from one that no longer asks.
	CoreIsolated []string `json:"coreIsolated,omitempty"`
	// MemsFollowing are the moved workloads whose cpuset.mems still allows
	// the nodes they left, so that an agent restarted meanwhile narrows it.
	MemsFollowing map[string]workload.MemsFollowing `json:"memsFollowing,omitempty"`
}

// Workload records what the agent owns for one workload.
type Workload struct {
	Cgroup string `json:"cgroup"`
	// Created is true when the agent made the cgroup and must remove it.
	Created bool `json:"created,omitempty"`
	// Started is the process the agent launched for a command workload.
	Started *Process `json:"started,omitempty"`
}

// Process identifies a process across pid reuse: a pid plus its start time
// in clock ticks since boot (field 22 of /proc/PID/stat).
type Process struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
}

// Lease is a transient CPU allocation held by `locus run` for its command.
type Lease struct {
	Cgroup     string              `json:"cgroup"`
	Assignment workload.Assignment `json:"assignment"`
	Owner      Process             `json:"owner"`
}

// Empty returns a checkpoint with no entries.
func Empty() Checkpoint {
	return Checkpoint{Version: FormatVersion, Assignments: map[string]workload.Assignment{},
		Workloads: map[string]Workload{}, Leases: map[string]Lease{}}
}

// Store is the state directory. A read-only store (a dry run) reads the
// checkpoint and changes nothing: Lock takes no lock, Save and Update write
// nothing, so its callers need no dry-run case of their own.
type Store struct {
	Dir      string
	ReadOnly bool

	cache cache // the checkpoint last read or written (cache.go)
}

const (
	checkpointFile = "checkpoint.json"
	lockFile       = "lock"
)

// Open creates the state directory if needed (mode 0700: it names cgroups
// and processes) and returns the store.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	return &Store{Dir: dir}, nil
}

// Path returns a file inside the state directory.
func (s *Store) Path(name string) string { return filepath.Join(s.Dir, name) }

// Lock takes the exclusive lock that serialises every read-modify-write of the
// checkpoint; call the returned function to release it. The lock dies with
// its holder, so a killed agent never leaves it stuck.
func (s *Store) Lock() (func(), error) {
	if s.ReadOnly {
		return func() {}, nil
	}
	f, err := os.OpenFile(s.Path(lockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}

// maxCheckpointBytes bounds what Load reads: a checkpoint of 10,000 workloads
// is a few MiB.
const maxCheckpointBytes = 256 << 20

// Load reads the checkpoint; a missing file is an empty checkpoint, a corrupt
// or newer one an error (the agent must not guess what it owns).
func (s *Store) Load() (Checkpoint, error) {
	c, err := s.loadCached(s.Path(checkpointFile))
	if errors.Is(err, os.ErrNotExist) {
		return Empty(), nil
	}
	return c, err
}

// decode reads a checkpoint as Save encodes it; where names it in errors.
func decode(raw []byte, where string) (Checkpoint, error) {
	c := Empty()
	if err := json.Unmarshal(raw, &c); err != nil {
		return Checkpoint{}, fmt.Errorf("%s is corrupt: %w (%w)", where, ErrCorrupt, err)
	}
	if c.Version != FormatVersion {
		return Checkpoint{}, fmt.Errorf("%s has format version %d, this agent reads %d",
			where, c.Version, FormatVersion)
	}
	return fill(c), nil
}

// fill replaces maps a hand-edited or older file left out ("null") with empty ones.
func fill(c Checkpoint) Checkpoint {
	e := Empty()
	if c.Assignments == nil {
		c.Assignments = e.Assignments
	}
	if c.Workloads == nil {
		c.Workloads = e.Workloads
	}
	if c.Leases == nil {
		c.Leases = e.Leases
	}
	return c
}

// Save replaces the checkpoint atomically.
func (s *Store) Save(c Checkpoint) error {
	if s.ReadOnly {
		return nil
	}
	raw, err := encode(c)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.Path(checkpointFile), raw, 0o600); err != nil {
		s.cache.drop()
		return err
	}
	s.saved(raw, c)
	return nil
}

// encode is compact JSON on one line: the agent rewrites the checkpoint as
// pods come and go, and indenting a few hundred entries cost more than the
// encoding itself (`jq . checkpoint.json` indents it for reading).
func encode(c Checkpoint) ([]byte, error) {
	c.Version = FormatVersion
	raw, err := json.Marshal(c)
	return append(raw, '\n'), err
}

// Update runs change on the checkpoint under the lock and saves the result
// when change returns nil.
func (s *Store) Update(change func(*Checkpoint) error) error {
	if s.ReadOnly {
		return nil
	}
	return update(s, change)
}

func update(s State, change func(*Checkpoint) error) error {
	unlock, err := s.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	c, err := s.Load()
	if err != nil {
		return err
	}
	if err := change(&c); err != nil {
		return err
	}
	return s.Save(c)
}

// Intend saves, in one update, an entry of ws for every workload known (the
// checkpoint as last loaded) lacks and the checkpoint still lacks under the
// lock. Recorded before anything is done for a workload, it tells a crash
// what to clean up. Nothing is written when known holds them all.
func (s *Store) Intend(known Checkpoint, ws map[string]Workload) error { return intend(s, known, ws) }

func intend(s State, known Checkpoint, ws map[string]Workload) error {
	fresh := map[string]Workload{}
	for name, e := range ws {
		if _, ok := known.Workloads[name]; !ok {
			fresh[name] = e
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	return s.Update(func(c *Checkpoint) error {
		for name, e := range fresh {
			if _, ok := c.Workloads[name]; !ok {
				c.Workloads[name] = e
			}
		}
		return nil
	})
}

// DropAssignments removes the assignments of the workloads named, in one
// update; none named, it writes nothing.
func (s *Store) DropAssignments(names []string) error { return dropAssignments(s, names) }

func dropAssignments(s State, names []string) error {
	if len(names) == 0 {
		return nil
	}
	return s.Update(func(c *Checkpoint) error {
		for _, name := range names {
			delete(c.Assignments, name)
		}
		return nil
	})
}

// ErrCorrupt is a checkpoint that does not parse (disk damage, hand edits).
var ErrCorrupt = errors.New("not a valid checkpoint")

// Rebuild replaces a corrupt checkpoint with the one observe builds from
// what can be observed, keeping the corrupt file aside (checkpoint.json.
// corrupt-<time>) for diagnosis. It returns that file's path; a checkpoint
// found valid under the lock (another process rebuilt it) is left as it is.
func (s *Store) Rebuild(observe func() Checkpoint) (aside string, err error) {
	unlock, err := s.Lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := s.Load(); !errors.Is(err, ErrCorrupt) {
		return "", err
	}
	aside = fmt.Sprintf("%s.corrupt-%d", s.Path(checkpointFile), time.Now().Unix())
	if err := os.Rename(s.Path(checkpointFile), aside); err != nil {
		return "", fmt.Errorf("set the corrupt checkpoint aside: %w", err)
	}
	c := observe()
	return aside, s.Save(fill(c))
}
