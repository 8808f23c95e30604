package cgroup

import "maps"

// Witness tells, from outside the filesystem, whether a cgroup directory is
// still the one it was: the same gen while it is, and known false where it
// cannot say. The agent in Kubernetes mode has one in its watch of the pods'
// cgroups (cgwatch.Watch.Generation), which sees every pod's and container's
// directory come and go.
type Witness func(dir string) (gen uint64, known bool)

// held is an identity kept past its scope, with the witness's generation of
// its directory when it was looked at.
type held struct {
	dir string
	id  DirID
	gen uint64
}

// SetWitness has DirID keep the identity of each directory the witness
// knows from one scope to the next, for as long as the witness gives the
// same generation: a reconcile then neither resolves again nor stats the
// directories of the pods and containers that did not change (the
// existence check of every pod's and container's cgroup was one lstat each
// per reconcile). Only directories DirID resolved itself, inside the root,
// are kept; one the witness stops knowing, or gives a new generation, is
// looked at again. Nil stops it.
func (h *Hierarchy) SetWitness(w Witness) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.witness, h.held, h.heldSweep = w, nil, minSweep
	if w != nil {
		h.held = map[relKey]held{}
	}
}

// witnessed is the identity kept for key while its directory's generation
// holds. A kept one whose generation moved is dropped.
func (h *Hierarchy) witnessed(key relKey) (DirID, bool) {
	h.mu.Lock()
	w := h.witness
	e, ok := h.held[key]
	h.mu.Unlock()
	if w == nil || !ok {
		return DirID{}, false
	}
	if gen, known := w(e.dir); known && gen == e.gen {
		return e.id, true
	}
	h.mu.Lock()
	delete(h.held, key)
	h.mu.Unlock()
	return DirID{}, false
}

// vouched says whether dir, cgroup rel's directory in ctrl, is one DirID
// found inside the root and kept (hold) in an earlier scope, which the
// witness says is unchanged since: it is inside still, with no look. A
// shared pool's change has the writer resolve the files of pods whose
// directories the witness vouches for, and looking at each again was one
// lstat per directory per reconcile. Outside a scope every path is looked
// at, as contain does.
func (h *Hierarchy) vouched(ctrl Controller, rel, dir string) bool {
	key := relKey{ctrl, rel}
	if h.version == V2 {
		key.ctrl = ""
	}
	h.mu.Lock()
	w, e, ok := h.witness, h.held[key], h.scopes > 0
	h.mu.Unlock()
	if !ok || w == nil || e.dir != dir {
		return false
	}
	gen, known := w(dir)
	return known && gen == e.gen
}

// generation is the witness's generation of dir, asked before dir is looked
// at (DirID): a change after it moves the generation, so the identity the
// look finds is never kept past a change the witness saw.
func (h *Hierarchy) generation(dir string) (uint64, bool) {
	h.mu.Lock()
	w := h.witness
	h.mu.Unlock()
	if w == nil {
		return 0, false
	}
	return w(dir)
}

// hold keeps the identity found for key, under the generation asked before
// the look. The cgroups of pods gone are never asked of again: when the
// identities kept have doubled since the last sweep, those the witness no
// longer vouches for are dropped, which bounds them by what it knows.
func (h *Hierarchy) hold(key relKey, dir string, id DirID, gen uint64) {
	h.mu.Lock()
	if h.held == nil {
		h.mu.Unlock()
		return
	}
	h.held[key] = held{dir, id, gen}
	sweep := len(h.held) > h.heldSweep
	var kept map[relKey]held
	if sweep {
		kept = maps.Clone(h.held)
	}
	w := h.witness
	h.mu.Unlock()
	if !sweep {
		return
	}
	var stale []relKey
	for k, e := range kept {
		if gen, known := w(e.dir); !known || gen != e.gen {
			stale = append(stale, k)
		}
	}
	h.mu.Lock()
	for _, k := range stale {
		delete(h.held, k)
	}
	h.heldSweep = 2*len(h.held) + minSweep
	h.mu.Unlock()
}

// minSweep is the fewest identities kept before the first sweep.
const minSweep = 64

// unhold forgets the identities kept of dir (removed by Locus itself).
// Called with mu held.
func (h *Hierarchy) unhold(dir string) {
	for k, e := range h.held {
		if e.dir == dir {
			delete(h.held, k)
		}
	}
}
