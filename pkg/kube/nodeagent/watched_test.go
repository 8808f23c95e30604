package nodeagent

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgwatch"
)

// The existence questions of remembered pods are answered by the cgroup
// watch without a look while it knows, and a container's cgroup removed,
// made again, or its pod's cgroup removed, is still seen: the answer always
// ends up the directory's truth.
func TestWatchedExistsSeesChanges(t *testing.T) {
	root := t.TempDir()
	podRel := "kubepods.slice/kubepods-pod1.slice"
	ctrRel := podRel + "/cri-containerd-1.scope"
	pod, ctr := filepath.Join(root, podRel), filepath.Join(root, ctrRel)
	if err := os.MkdirAll(ctr, 0o755); err != nil {
		t.Fatal(err)
	}
	looks := 0
	look := func(rel string) bool {
		looks++
		fi, err := os.Stat(filepath.Join(root, rel))
		return err == nil && fi.IsDir()
	}
	// made is told when the watch has read a directory's creation: a
	// listing before that event is read is made stale by it.
	made := make(chan struct{}, 8)
	s := &Source{cgw: cgwatch.New(cgwatch.Options{Log: slog.New(slog.DiscardHandler),
		Wake: func() {
			select {
			case made <- struct{}{}:
			default:
			}
		}})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.cgw.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	if got := s.watchedExists(look)(podRel); !got || looks != 1 {
		t.Fatalf("before the pod is watched: %v after %d looks, want true after 1", got, looks)
	}
	// What addUnlisted does at a reconcile: the pod's directory watched.
	s.cgw.Children(pod)
	s.podDirs = map[string]string{podRel: pod}
	exists := s.watchedExists(look)
	looks = 0
	if !exists(podRel) || !exists(ctrRel) || exists(podRel+"/cri-containerd-2.scope") || looks != 0 {
		t.Fatalf("a watched pod: looked %d times, want none", looks)
	}
	truth := func(rel string, want bool, what string) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if exists(rel) == want {
				return
			}
		}
		t.Fatalf("%s: %s still said to exist: %v", what, rel, !want)
	}
	if err := os.Remove(ctr); err != nil {
		t.Fatal(err)
	}
	truth(ctrRel, false, "the container's cgroup removed")
	for len(made) > 0 {
		<-made
	}
	if err := os.Mkdir(ctr, 0o755); err != nil {
		t.Fatal(err)
	}
	truth(ctrRel, true, "the container's cgroup made again")
	select { // the creation's event read, so the listing below is not stale
	case <-made:
	case <-time.After(5 * time.Second):
		t.Fatal("the watch never read the container's cgroup made again")
	}
	s.cgw.Children(pod) // listed again at the next reconcile: known again
	looks = 0
	if !exists(ctrRel) || looks != 0 {
		t.Fatalf("listed again: looked %d times", looks)
	}
	if err := os.Remove(ctr); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pod); err != nil {
		t.Fatal(err)
	}
	truth(podRel, false, "the pod's cgroup removed")
	truth(ctrRel, false, "the pod's cgroup removed")
}
