package cgwatch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsnotify/fsnotify"
)

// Exists answers from the events, and every change is seen: a child made,
// removed, or made again; the watched directory removed and made again;
// events lost. Where the watch cannot say, it says so rather than guess.
func TestExistsSeesEveryChange(t *testing.T) {
	root := t.TempDir()
	pod := filepath.Join(root, "pod")
	ctr := filepath.Join(pod, "ctr")
	mkdir(t, pod)
	mkdir(t, ctr)
	w, wakes := started(t, Options{})
	if _, known := w.Exists(pod); known {
		t.Fatal("a directory not watched yet is known")
	}
	if _, ok := w.Children(pod); !ok {
		t.Fatal("not watched")
	}
	want := func(path string, exists bool) {
		t.Helper()
		if e, known := w.Exists(path); !known || e != exists {
			t.Fatalf("Exists(%s) = %v, known %v; want %v, known", path, e, known, exists)
		}
	}
	want(pod, true)
	want(ctr, true)
	want(filepath.Join(pod, "other"), false)
	if _, known := w.Exists(filepath.Join(ctr, "below")); known {
		t.Error("a grandchild of a watched directory is known")
	}

	// A child removed: stale (not known) until listed again, then gone.
	if err := os.Remove(ctr); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removal to make the listing stale", func() bool {
		e, known := w.Exists(ctr)
		return !known || !e
	})
	w.Children(pod)
	want(ctr, false)

	// Made again: seen as soon as its event arrived.
	mkdir(t, ctr)
	awaitWake(t, wakes, "the child was made again")
	if e, known := w.Exists(ctr); known && !e {
		t.Fatal("a child made again is said to be absent after its event")
	}
	w.Children(pod)
	want(ctr, true)

	// The watched directory itself removed: never said to exist after its
	// event, and watched anew (known again) once made again and listed.
	if err := os.Remove(ctr); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watched directory's removal", func() bool {
		e, known := w.Exists(pod)
		return !known || !e
	})
	mkdir(t, pod)
	if e, known := w.Exists(pod); known && e {
		t.Fatal("a removed directory made again is known before it is watched again")
	}
	w.Children(pod)
	want(pod, true)

	// Events lost: nothing is known until listed again.
	w.lost(fsnotify.ErrEventOverflow)
	if _, known := w.Exists(pod); known {
		t.Error("a directory is known after events were lost")
	}
	w.Children(pod)
	want(pod, true)
}

// A listing cut at MaxChildren answers nothing about the children it may
// have left out, and a listing of exactly MaxChildren is whole.
func TestExistsCutListing(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			pod := filepath.Join(t.TempDir(), "pod")
			mkdir(t, pod)
			for i := range n {
				mkdir(t, filepath.Join(pod, fmt.Sprint("c", i)))
			}
			w, _ := started(t, Options{MaxChildren: 2})
			w.Children(pod)
			e, known := w.Exists(filepath.Join(pod, "absent"))
			if cut := n > 2; known == cut || e {
				t.Errorf("%d children, at most 2 listed: Exists of an absent child = %v, known %v", n, e, known)
			}
		})
	}
}

// Without inotify nothing is known.
func TestExistsWithoutInotify(t *testing.T) {
	w := &Watch{o: Options{MaxWatches: 1, MaxChildren: 1, Log: slog.New(slog.DiscardHandler)}, dirs: map[string]*dir{}}
	w.fail("no inotify")
	pod := t.TempDir()
	w.Children(pod)
	if _, known := w.Exists(pod); known {
		t.Error("known without a watch")
	}
}

// A generation holds while nothing happens to a directory, and moves when
// it is removed and made again under the same name, even when the next
// listing names it again as if nothing happened; nothing is known once
// events were lost.
func TestGenerationMovesOnEveryChange(t *testing.T) {
	pod := filepath.Join(t.TempDir(), "pod")
	ctr := filepath.Join(pod, "ctr")
	mkdir(t, pod)
	mkdir(t, ctr)
	w, wakes := started(t, Options{})
	w.Children(pod)
	gen := func(path string) uint64 {
		t.Helper()
		g, known := w.Generation(path)
		if !known {
			t.Fatalf("%s: not known", path)
		}
		return g
	}
	podGen, ctrGen := gen(pod), gen(ctr)
	w.Children(pod)
	if gen(pod) != podGen || gen(ctr) != ctrGen {
		t.Fatal("generations moved with nothing changed")
	}
	if _, known := w.Generation(filepath.Join(pod, "absent")); known {
		t.Error("a child not listed has a generation")
	}
	if err := os.Remove(ctr); err != nil {
		t.Fatal(err)
	}
	mkdir(t, ctr)
	awaitWake(t, wakes, "the child made again")
	waitFor(t, "both events", func() bool {
		w.Children(pod)
		g, known := w.Generation(ctr)
		return known && g != ctrGen
	})
	if gen(pod) != podGen {
		t.Error("the pod's own generation moved with a child's")
	}

	if err := os.Remove(ctr); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pod); err != nil {
		t.Fatal(err)
	}
	// Until its own removal's event arrives, a directory made again in its
	// place would be taken for it: that is the window the events leave.
	waitFor(t, "the pod's removal", func() bool { return w.Watched() == 0 })
	if _, known := w.Generation(pod); known {
		t.Fatal("a removed directory is known")
	}
	mkdir(t, pod)
	w.Children(pod)
	if gen(pod) == podGen {
		t.Error("the pod made again has its old generation")
	}
	w.lost(fsnotify.ErrEventOverflow)
	if _, known := w.Generation(pod); known {
		t.Error("known after events were lost")
	}
}

// Once the watch stops reading events, it vouches for nothing.
func TestNothingKnownOnceStopped(t *testing.T) {
	pod := filepath.Join(t.TempDir(), "pod")
	mkdir(t, pod)
	mkdir(t, filepath.Join(pod, "ctr"))
	w := New(Options{Log: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	w.Children(pod)
	if _, known := w.Generation(filepath.Join(pod, "ctr")); !known {
		t.Fatal("not known while running")
	}
	cancel()
	<-done
	for _, p := range []string{pod, filepath.Join(pod, "ctr")} {
		if _, known := w.Exists(p); known {
			t.Errorf("Exists(%s) known after Run returned", p)
		}
		if _, known := w.Generation(p); known {
			t.Errorf("Generation(%s) known after Run returned", p)
		}
	}
}

// A watched directory moved away is no longer vouched for, whether its
// parent is watched (an event in both) or not (its own only): inotify
// drops the watch of a directory moved, so no event would tell of it
// after. A cgroup removed whole, as the kernel removes it, is seen so in a
// test tree moved out of it.
func TestExistsForgetsAMovedDirectory(t *testing.T) {
	for _, parentWatched := range []bool{false, true} {
		t.Run(fmt.Sprint("parent watched ", parentWatched), func(t *testing.T) {
			root := t.TempDir()
			tier := filepath.Join(root, "tier")
			pod := filepath.Join(tier, "pod")
			mkdir(t, tier)
			mkdir(t, pod)
			mkdir(t, filepath.Join(pod, "ctr"))
			w, _ := started(t, Options{})
			if parentWatched && !w.Parent(tier) {
				t.Fatal("the parent is not watched")
			}
			if _, ok := w.Children(pod); !ok {
				t.Fatal("not watched")
			}
			if e, known := w.Exists(pod); !e || !known {
				t.Fatalf("Exists(pod) = %v, known %v before the move", e, known)
			}
			if err := os.Rename(pod, filepath.Join(root, "away")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the move to be seen", func() bool {
				e, known := w.Exists(pod)
				_, genKnown := w.Generation(filepath.Join(pod, "ctr"))
				return (!known || !e) && !genKnown
			})
		})
	}
}
