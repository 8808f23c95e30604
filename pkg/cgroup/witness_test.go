package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeWitness vouches for the directories it was told of, each under the
// generation it was given.
type fakeWitness struct {
	mu   sync.Mutex
	gens map[string]uint64
}

func (w *fakeWitness) gen(dir string) (uint64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	g, ok := w.gens[dir]
	return g, ok
}

func (w *fakeWitness) set(dir string, g uint64, known bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if known {
		w.gens[dir] = g
	} else {
		delete(w.gens, dir)
	}
}

// witnessedA is a v2 hierarchy with cgroup "a", whose directory dir the
// witness w vouches for under generation 1.
func witnessedA(t *testing.T) (f *fixture, h *Hierarchy, dir string, w *fakeWitness) {
	t.Helper()
	f = newFixture(t, V2, false)
	f.mkcg("a")
	h, err := Open(f.root, V2)
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(f.root, "a")
	w = &fakeWitness{gens: map[string]uint64{dir: 1}}
	h.SetWitness(w.gen)
	return f, h, dir, w
}

// An identity is kept from one scope to the next only while the witness
// gives the generation it gave before the look: a directory made anew is
// seen at the first scope after the witness moved its generation or stopped
// knowing it, and outside a scope DirID always looks.
func TestWitnessKeepsIdentityOnlyWhileVouched(t *testing.T) {
	f, h, dir, w := witnessedA(t)
	idIn := func() DirID {
		t.Helper()
		defer h.Scope()()
		id, ok := h.DirID("", "a")
		if !ok {
			t.Fatal("a: no directory")
		}
		return id
	}
	first := idIn()
	remake := func() {
		t.Helper()
		if err := os.Rename(dir, dir+".old"); err != nil { // keeps the inode from coming back
			t.Fatal(err)
		}
		if err := os.RemoveAll(dir + ".old"); err != nil {
			t.Fatal(err)
		}
		f.mkcg("a")
	}
	remake()
	if again := idIn(); again != first {
		t.Fatalf("made anew, the witness still vouching: %v, want the identity kept %v (no look)", again, first)
	}
	if now, _ := h.DirID("", "a"); now == first {
		t.Fatal("outside a scope DirID did not look")
	}
	w.set(dir, 2, true)
	second := idIn()
	if second == first {
		t.Fatal("a new generation: the old identity kept")
	}
	if again := idIn(); again != second {
		t.Fatalf("the new generation holding: %v, want %v", again, second)
	}
	remake()
	w.set(dir, 0, false)
	if now := idIn(); now == second {
		t.Fatal("no longer known to the witness: the old identity kept")
	}
}

// Identities of directories the witness no longer knows are dropped as
// others are kept: what is kept stays bounded by what it knows.
func TestWitnessKeepsNoIdentityOfTheGone(t *testing.T) {
	f := newFixture(t, V2, false)
	h, err := Open(f.root, V2)
	if err != nil {
		t.Fatal(err)
	}
	w := &fakeWitness{gens: map[string]uint64{}}
	h.SetWitness(w.gen)
	for i := range 500 {
		rel := fmt.Sprintf("gone/p%d", i)
		f.mkcg(rel)
		dir := filepath.Join(f.root, rel)
		w.set(dir, 1, true)
		end := h.Scope()
		h.DirID("", rel)
		end()
		w.set(dir, 0, false) // the pod is gone: never asked of again
	}
	h.mu.Lock()
	n := len(h.held)
	h.mu.Unlock()
	if n > 2*minSweep+1 {
		t.Errorf("%d identities kept of directories the witness no longer knows", n)
	}
}

// Dir takes a directory the witness vouches for as inside the root without
// a look only while the witness gives the generation DirID kept it under:
// once it moves, a directory swapped for a symlink out of the root is
// refused again. Outside a scope Dir always looks.
func TestDirTrustsTheWitnessOnlyWhileItVouches(t *testing.T) {
	_, h, dir, w := witnessedA(t)
	func() {
		defer h.Scope()()
		if _, ok := h.DirID("", "a"); !ok { // kept under generation 1
			t.Fatal("a: no directory")
		}
	}()
	outside := t.TempDir()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, dir); err != nil {
		t.Fatal(err)
	}
	dirIn := func() error {
		defer h.Scope()()
		_, err := h.Dir("", "a")
		return err
	}
	if err := dirIn(); err != nil {
		t.Fatalf("vouched for, generation unchanged: %v, want no look", err)
	}
	if _, err := h.Dir("", "a"); err == nil {
		t.Fatal("outside a scope: a symlink out of the root taken without a look")
	}
	w.set(dir, 2, true)
	if err := dirIn(); err == nil || !strings.Contains(err.Error(), "outside the cgroup root") {
		t.Fatalf("the witness moved its generation: %v, want the symlink refused", err)
	}
	w.set(dir, 1, true)
	h.SetWitness(nil)
	if err := dirIn(); err == nil {
		t.Fatal("no witness: a symlink out of the root taken without a look")
	}
}
