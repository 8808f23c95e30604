package nodeagent_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/locus-project/locus/pkg/cgroup"
)

// TestFakeKubeletCgroupAppearsWhole holds the fake kubelet to what the
// kernel does: a cgroup's directory appears with its interface files, never
// before them. The agent is woken by a directory's inotify event and writes
// it at once (the early path, a container not yet in its pod's status), so
// a directory made first and filled after let it find a file missing, a
// CgroupWriteFailed warning about a live pod that no kernel would give.
// Watched as the agent watches, from the event on.
func TestFakeKubeletCgroupAppearsWhole(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			k := newFakeKubelet(t, v, true, "0-3", "0")
			c := k.controllers()[0]
			tier := k.dir(c, k.tierCgroup(corev1.PodQOSBurstable))
			fw, files := watchCgroup(t, v, c, tier)
			const pods = 50
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := range pods {
					pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(podUID(i))},
						Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable}}
					k.mkcg(k.PodCgroup(pod))
				}
			}()
			// The pods' cgroups are made while the events are read; a
			// failure is told once they are all made, not from under them.
			var missing string
			seen, timeout := 0, time.After(30*time.Second)
			for seen < pods && missing == "" {
				select {
				case ev := <-fw.Events:
					if !ev.Has(fsnotify.Create) {
						continue
					}
					seen++
					for name := range files {
						if _, err := os.Lstat(filepath.Join(ev.Name, name)); err != nil && missing == "" {
							missing = fmt.Sprintf("%s appeared without its %s (%d pods seen whole before it)", ev.Name, name, seen-1)
						}
					}
				case err := <-fw.Errors:
					missing = err.Error()
				case <-timeout:
					missing = fmt.Sprintf("%d of %d pod cgroups seen", seen, pods)
				}
			}
			<-done
			if missing != "" {
				t.Fatal(missing)
			}
		})
	}
}

// watchCgroup watches dir, a cgroup of controller c, for the test's span,
// and gives the files a cgroup of c holds on version v.
func watchCgroup(t *testing.T, v cgroup.Version, c, dir string) (*fsnotify.Watcher, map[string]string) {
	t.Helper()
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { fw.Close() })
	if err := fw.Add(dir); err != nil {
		t.Fatal(err)
	}
	if v == cgroup.V1 {
		return fw, v1Files[c]
	}
	return fw, v2Files
}

func podUID(i int) string { return fmt.Sprintf("00000000-0000-0000-0000-%012x", i) }

// TestFakeKubeletCgroupGoesWhole holds the fake kubelet's removal to the
// kernel's rmdir: a cgroup's files go with its directory, never before it
// (its child cgroups, removed first, may). A directory emptied file by file
// let a write find it there with its file missing, which the agent reports,
// where it lets pass a write to a cgroup that is gone.
func TestFakeKubeletCgroupGoesWhole(t *testing.T) {
	for _, v := range []cgroup.Version{cgroup.V1, cgroup.V2} {
		t.Run(v.String(), func(t *testing.T) {
			k := newFakeKubelet(t, v, true, "0-3", "0")
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(podUID(1))},
				Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "web"}}},
				Status: corev1.PodStatus{QOSClass: corev1.PodQOSBurstable}}
			k.mkcg(k.ContainerCgroup(pod, "web"))
			c := k.controllers()[0]
			dir := k.dir(c, k.PodCgroup(pod))
			fw, files := watchCgroup(t, v, c, dir)
			k.Remove(pod)
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s still there: %v", dir, err)
			}
			// inotify keeps the order: every event before the directory's
			// own is of something that went while it was still there.
			for timeout := time.After(10 * time.Second); ; {
				select {
				case ev := <-fw.Events:
					if ev.Name == dir {
						return
					}
					if _, ok := files[filepath.Base(ev.Name)]; ok {
						t.Fatalf("%s went (%v) while its cgroup %s was still there", filepath.Base(ev.Name), ev.Op, dir)
					}
				case err := <-fw.Errors:
					t.Fatal(err)
				case <-timeout:
					t.Fatal("no event of the cgroup's removal")
				}
			}
		})
	}
}
