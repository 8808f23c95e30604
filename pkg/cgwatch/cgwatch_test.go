package cgwatch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// started runs a watch until the end of the test; wakes receives a value
// for each Wake.
func started(t *testing.T, o Options) (*Watch, chan struct{}) {
	t.Helper()
	wakes := make(chan struct{}, 100)
	o.Wake = func() { wakes <- struct{}{} }
	w := New(o)
	if p := w.Problem(); p != "" {
		t.Fatalf("problem %q", p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w, wakes
}

func awaitWake(t *testing.T, wakes chan struct{}, what string) {
	t.Helper()
	select {
	case <-wakes:
	case <-time.After(5 * time.Second):
		t.Fatalf("no wake after %s", what)
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// A directory made in a watched one wakes the owner, and the watched one's
// children are listed again; files are not children; a directory removed
// and made again is watched anew.
func TestChildren(t *testing.T) {
	root := t.TempDir()
	pod := filepath.Join(root, "pod")
	mkdir(t, pod)
	mkdir(t, filepath.Join(pod, "a"))
	if err := os.WriteFile(filepath.Join(pod, "cpuset.cpus"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w, wakes := started(t, Options{})
	if got, ok := w.Children(pod); !ok || !slices.Equal(got, []string{"a"}) {
		t.Fatalf("children %v, %v", got, ok)
	}
	mkdir(t, filepath.Join(pod, "c"))
	awaitWake(t, wakes, "a child was made")
	mkdir(t, filepath.Join(pod, "b"))
	awaitWake(t, wakes, "a second child was made")
	if got, ok := w.Children(pod); !ok || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("children after two were made: %v, %v", got, ok)
	}
	if err := os.Remove(filepath.Join(pod, "a")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a removed child to be forgotten", func() bool {
		got, _ := w.Children(pod)
		return slices.Equal(got, []string{"b", "c"})
	})
	if _, ok := w.Children(filepath.Join(root, "missing")); ok {
		t.Error("a directory that does not exist is watched")
	}
	if p := w.Problem(); p != "" {
		t.Errorf("a missing directory is a problem: %q", p)
	}

	for _, c := range []string{"b", "c", "cpuset.cpus"} {
		if err := os.Remove(filepath.Join(pod, c)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(pod); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removed directory to be forgotten", func() bool { return w.Watched() == 0 })
	mkdir(t, pod)
	if got, ok := w.Children(pod); !ok || len(got) != 0 {
		t.Fatalf("children of the directory made again: %v, %v", got, ok)
	}
	mkdir(t, filepath.Join(pod, "d"))
	awaitWake(t, wakes, "a child was made in the directory made again")
}

// A parent wakes the owner when a directory appears in it; Retain stops
// watching the directories not kept, which then wake nobody.
func TestParentAndRetain(t *testing.T) {
	root := t.TempDir()
	tier, pod := filepath.Join(root, "tier"), filepath.Join(root, "pod")
	mkdir(t, tier)
	mkdir(t, pod)
	w, wakes := started(t, Options{})
	if !w.Parent(tier) {
		t.Fatal("the parent is not watched")
	}
	if _, ok := w.Children(pod); !ok {
		t.Fatal("the pod is not watched")
	}
	mkdir(t, filepath.Join(tier, "pod2"))
	awaitWake(t, wakes, "a pod was made in the tier")
	w.Retain(func(p string) bool { return p == tier })
	if w.Watched() != 1 {
		t.Fatalf("%d watched after Retain of one", w.Watched())
	}
	mkdir(t, filepath.Join(pod, "c"))
	select {
	case <-wakes:
		t.Fatal("a directory no longer watched woke the owner")
	case <-time.After(200 * time.Millisecond):
	}
}

// The number of watches and of children listed is bounded; the watch
// limit is told once as the problem, and the directories beyond it are
// reported as not watched.
func TestBounds(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	mkdir(t, a)
	mkdir(t, b)
	for i := range 5 {
		mkdir(t, filepath.Join(a, strings.Repeat("x", i+1)))
	}
	w, _ := started(t, Options{MaxWatches: 1, MaxChildren: 3})
	if got, ok := w.Children(a); !ok || len(got) > 3 {
		t.Fatalf("children of a: %v, %v; want at most 3", got, ok)
	}
	if _, ok := w.Children(b); ok {
		t.Fatal("a second directory is watched beyond MaxWatches 1")
	}
	if p := w.Problem(); !strings.Contains(p, "1 cgroup directories watched") {
		t.Errorf("problem %q", p)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// Created is told each directory made in one watched for its children, with
// the directory and the name, before the wake; a directory made in one
// watched only as a parent is told to nobody.
func TestCreated(t *testing.T) {
	root := t.TempDir()
	tier, pod := filepath.Join(root, "tier"), filepath.Join(root, "pod")
	mkdir(t, tier)
	mkdir(t, pod)
	created := make(chan string, 10)
	w, wakes := started(t, Options{Created: func(dir, name string) { created <- filepath.Join(dir, name) }})
	if !w.Parent(tier) {
		t.Fatal("the parent is not watched")
	}
	if _, ok := w.Children(pod); !ok {
		t.Fatal("the pod is not watched")
	}
	mkdir(t, filepath.Join(tier, "pod2"))
	awaitWake(t, wakes, "a pod was made in the tier")
	mkdir(t, filepath.Join(pod, "c"))
	awaitWake(t, wakes, "a container was made in the pod")
	select {
	case got := <-created:
		if want := filepath.Join(pod, "c"); got != want {
			t.Fatalf("created %s, want %s", got, want)
		}
	default:
		t.Fatal("Created was not called before the wake")
	}
	select {
	case got := <-created:
		t.Fatalf("created %s as well", got)
	default:
	}
}

// A directory made in a Parent that Adopt wants is watched for its children
// at once: Created is told of the children made before the watch was in
// place (the listing) and after (their events), and the next Retain keeps it
// even if the owner's list, made before it appeared, does not name it. One
// Adopt does not want stays unwatched, and Adopt of a path that does not
// exist watches nothing.
func TestAdopt(t *testing.T) {
	root := t.TempDir()
	tier := filepath.Join(root, "burstable")
	mkdir(t, tier)
	created := make(chan string, 100)
	wanted := filepath.Join(tier, "poda")
	w, wakes := started(t, Options{
		Adopt:   func(path string) bool { return path == wanted },
		Created: func(dir, name string) { created <- filepath.Join(dir, name) },
	})
	if !w.Parent(tier) {
		t.Fatal("the tier is not watched")
	}
	// The pod's directory appears holding the sandbox's already: made
	// aside and moved in, as fast as a runtime could be.
	stage := filepath.Join(root, "stage")
	mkdir(t, stage)
	mkdir(t, filepath.Join(stage, "sandbox"))
	if err := os.Rename(stage, wanted); err != nil {
		t.Fatal(err)
	}
	mkdir(t, filepath.Join(tier, "podb"))
	awaitCreated := func(want string) {
		t.Helper()
		for deadline := time.After(5 * time.Second); ; {
			select {
			case got := <-created:
				if got == want {
					return
				}
				if filepath.Dir(got) != wanted {
					t.Fatalf("Created told of %s, in a directory not adopted", got)
				}
			case <-deadline:
				t.Fatalf("Created not told of %s", want)
			}
		}
	}
	awaitCreated(filepath.Join(wanted, "sandbox"))
	awaitWake(t, wakes, "the pods' directories were made")
	w.Retain(func(path string) bool { return path == tier }) // a list made before the pod appeared
	mkdir(t, filepath.Join(wanted, "app"))
	awaitCreated(filepath.Join(wanted, "app"))
	if got, ok := w.Children(wanted); !ok || !slices.Equal(got, []string{"app", "sandbox"}) {
		t.Fatalf("adopted directory's children %v, %v", got, ok)
	}
	if n := w.Watched(); n != 2 {
		t.Errorf("%d directories watched, want the tier and the adopted pod", n)
	}
	w.Retain(func(path string) bool { return path == tier })
	if n := w.Watched(); n != 1 {
		t.Errorf("%d directories watched after a second Retain without the pod, want 1", n)
	}
	w.Adopt(filepath.Join(tier, "missing"))
	if n := w.Watched(); n != 1 {
		t.Errorf("Adopt of a missing directory: %d watched, want 1", n)
	}
}
