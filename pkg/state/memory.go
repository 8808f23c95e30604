package state

import (
	"errors"
	"sync"
)

// State keeps the checkpoint, what the agent owns. Store keeps it in the
// state directory, where it outlives the agent; Memory keeps it in the
// process, for tests and for callers that decide without a node. The agent
// and its executor use only this, and TestStates holds both to one
// behaviour, down to the checkpoint's encoding.
type State interface {
	// Lock serialises read-modify-write cycles; call unlock to release.
	Lock() (unlock func(), err error)
	// Load returns a copy of the checkpoint; none saved yet is Empty().
	Load() (Checkpoint, error)
	Save(Checkpoint) error
	// Update runs change under the lock and saves the result when change
	// returns nil.
	Update(change func(*Checkpoint) error) error
	// Intend records the workloads of ws that known lacks, before anything
	// is done for them.
	Intend(known Checkpoint, ws map[string]Workload) error
	DropAssignments(names []string) error
	// Rebuild replaces a corrupt checkpoint with observe's; it returns where
	// the corrupt one was set aside, if anywhere.
	Rebuild(observe func() Checkpoint) (aside string, err error)
}

var (
	_ State = (*Store)(nil)
	_ State = (*Memory)(nil)
)

// Memory is a State in memory. It keeps the checkpoint encoded as Store
// writes it, so a Load is a copy that shares nothing with what was saved.
type Memory struct {
	lock sync.Mutex // Lock's
	mu   sync.Mutex // raw's
	raw  []byte     // nil: nothing saved yet
}

// NewMemory returns an empty in-memory State.
func NewMemory() *Memory { return &Memory{} }

func (m *Memory) Lock() (func(), error) {
	m.lock.Lock()
	return m.lock.Unlock, nil
}

func (m *Memory) Load() (Checkpoint, error) {
	m.mu.Lock()
	raw := m.raw
	m.mu.Unlock()
	if raw == nil {
		return Empty(), nil
	}
	return decode(raw, "the checkpoint in memory")
}

func (m *Memory) Save(c Checkpoint) error {
	raw, err := encode(c)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.raw = raw
	m.mu.Unlock()
	return nil
}

func (m *Memory) Update(change func(*Checkpoint) error) error { return update(m, change) }

func (m *Memory) Intend(known Checkpoint, ws map[string]Workload) error {
	return intend(m, known, ws)
}

func (m *Memory) DropAssignments(names []string) error { return dropAssignments(m, names) }

// Rebuild: what Memory holds it encoded itself, so it is never corrupt and
// there is nothing to set aside.
func (m *Memory) Rebuild(observe func() Checkpoint) (string, error) {
	unlock, _ := m.Lock()
	defer unlock()
	if _, err := m.Load(); !errors.Is(err, ErrCorrupt) {
		return "", err
	}
	return "", m.Save(fill(observe()))
}
