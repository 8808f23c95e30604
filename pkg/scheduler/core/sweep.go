package core

import (
	"sync"
	"time"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
)

// sweepKeys is how many requests' answers a Sweeper keeps: distinct
// requests are few (counts and policies), as for a view's memo.
const sweepKeys = 32

// Sweeper answers Filter's question for every node of a snapshot at
// once, so that a scheduling cycle reads one word per node instead of
// touching each node's view (its heartbeat, then its remembered
// placements: a cache miss each, on every node Filter asks, in every
// cycle). Between two cycles only the node or two a cycle assumed on
// change, so the answers to a request are kept and only those of the
// views that changed since are found again. Safe for concurrent use.
type Sweeper struct {
	mu    sync.Mutex
	tick  uint64
	tabs  []*fitTable // at most sweepKeys
	beats beatTable
}

// Sweep is one request's answers on every view of one snapshot. It never
// changes.
type Sweep struct {
	score  []int32   // by slot: 1 + FitsScore's score where the request fits the view, else 0
	oldest time.Time // the oldest heartbeat Fresh looks at, zero for none
}

// fitTable is the answers to one request, kept for the next snapshot.
type fitTable struct {
	key   uint64
	mem   cpualloc.Memory // the request's memory (see memoMemory)
	snap  *Snapshot
	score []int32 // published in a Sweep: never changed, replaced
	used  uint64
}

// beatTable is the heartbeat Fresh reads of each view of snap, by slot
// (zero where Fresh reads none: no view, an unusable one, or none in the
// report), and the oldest of them.
type beatTable struct {
	snap    *Snapshot
	at      []time.Time
	oldest  time.Time
	nOldest int // the slots whose heartbeat is the oldest
}

// Sweep is req's answers on every node of snap: Score(slot) is what
// FitsScore(snap.At(slot), 0, req) says, AllFresh whether Fresh passes
// every view. Nil for a request a view does not remember (see memoKey):
// every node would be placed anew in every cycle; the caller asks the
// views instead.
func (w *Sweeper) Sweep(snap *Snapshot, req Request) *Sweep {
	key, ok := req.memoKey()
	if !ok || snap == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tick++
	t := w.table(key, req.Memory)
	t.used = w.tick
	t.refresh(snap, req)
	return &Sweep{score: t.score, oldest: w.beats.refresh(snap)}
}

// table is key's table, made (in place of the least recently used one
// when there are sweepKeys) if there is none.
func (w *Sweeper) table(key uint64, mem cpualloc.Memory) *fitTable {
	lru := -1
	for i, t := range w.tabs {
		if t.key == key && t.mem == mem {
			return t
		}
		if lru < 0 || t.used < w.tabs[lru].used {
			lru = i
		}
	}
	t := &fitTable{key: key, mem: mem}
	if len(w.tabs) < sweepKeys {
		w.tabs = append(w.tabs, t)
	} else {
		w.tabs[lru] = t
	}
	return t
}

// refresh makes t's answers those of snap: a copy of the last ones with
// the views that changed since asked again, or all of them asked when
// the slots changed.
func (t *fitTable) refresh(snap *Snapshot, req Request) {
	if t.snap == snap {
		return
	}
	old := t.snap
	score := make([]int32, snap.Slots())
	if old.SameSlots(snap) && len(old.chunks) == len(snap.chunks) && len(t.score) == len(score) {
		copy(score, t.score)
		for k, ch := range snap.chunks {
			was := old.chunks[k]
			if ch == was {
				continue
			}
			for j, v := range ch {
				if v != was[j] {
					score[k<<chunkBits|j] = answer(v, req)
				}
			}
		}
	} else {
		for k, ch := range snap.chunks {
			for j, v := range ch {
				score[k<<chunkBits|j] = answer(v, req)
			}
		}
	}
	t.snap, t.score = snap, score
}

func answer(v *NodeView, req Request) int32 {
	if v == nil {
		return 0
	}
	score, err := FitsScore(v, 0, req)
	if err != nil {
		return 0
	}
	return int32(score) + 1
}

// refresh makes b the heartbeats of snap's views, and returns the oldest.
func (b *beatTable) refresh(snap *Snapshot) time.Time {
	if b.snap == snap {
		return b.oldest
	}
	old := b.snap
	b.snap = snap
	if !old.SameSlots(snap) || len(old.chunks) != len(snap.chunks) || len(b.at) != snap.Slots() {
		b.at = make([]time.Time, snap.Slots())
		for k, ch := range snap.chunks {
			for j, v := range ch {
				b.at[k<<chunkBits|j] = beatOf(v)
			}
		}
		b.rescan()
		return b.oldest
	}
	for k, ch := range snap.chunks {
		was := old.chunks[k]
		if ch == was {
			continue
		}
		for j, v := range ch {
			if v == was[j] {
				continue
			}
			i := k<<chunkBits | j
			if prev := b.at[i]; !prev.IsZero() && prev.Equal(b.oldest) {
				b.nOldest--
			}
			at := beatOf(v)
			b.at[i] = at
			switch {
			case at.IsZero():
			case b.oldest.IsZero() || at.Before(b.oldest):
				b.oldest, b.nOldest = at, 1
			case at.Equal(b.oldest):
				b.nOldest++
			}
		}
	}
	if b.nOldest <= 0 {
		b.rescan() // the oldest went: the next oldest is not known
	}
	return b.oldest
}

// rescan finds the oldest heartbeat among all.
func (b *beatTable) rescan() {
	b.oldest, b.nOldest = time.Time{}, 0
	for _, t := range b.at {
		switch {
		case t.IsZero():
		case b.nOldest == 0 || t.Before(b.oldest):
			b.oldest, b.nOldest = t, 1
		case t.Equal(b.oldest):
			b.nOldest++
		}
	}
}

// beatOf is the heartbeat Fresh compares: none for no view, or an
// unusable one (Fresh passes both).
func beatOf(v *NodeView) time.Time {
	if v == nil || v.Err != nil {
		return time.Time{}
	}
	return v.Heartbeat
}

// Score is FitsScore's answer on the view in slot: its score, and
// whether the request fits (false for no view, and for a slot out of
// range or a nil Sweep).
func (s *Sweep) Score(slot int) (int64, bool) {
	if s == nil || uint(slot) >= uint(len(s.score)) {
		return 0, false
	}
	k := s.score[slot]
	return int64(k) - 1, k > 0
}

// AllFresh says whether Fresh(v, now, maxAge) passes every view of the
// snapshot: it does for all when it does for the oldest heartbeat, as a
// report's age only grows the older its heartbeat. False for a nil Sweep.
func (s *Sweep) AllFresh(now time.Time, maxAge time.Duration) bool {
	if s == nil {
		return false
	}
	return maxAge <= 0 || s.oldest.IsZero() || now.Sub(s.oldest) <= maxAge
}
