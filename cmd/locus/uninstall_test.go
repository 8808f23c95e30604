package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/kube/kubeclient/clientset"
)

// v1Tree makes a fake cgroup v1 tree with the files of one container's cgroups.
func v1Tree(t *testing.T, cg string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for _, c := range []string{"cpuset", "memory", "cpu", "cpuacct"} {
		for _, dir := range []string{filepath.Join(root, c), filepath.Join(root, c, cg)} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"cgroup.procs", "tasks"} {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for name, v := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestRestoreOriginalsWritesBackEveryRecordedFile(t *testing.T) {
	const cg = "kubepods/podA/c1"
	root := v1Tree(t, cg, map[string]string{
		"cpuset/cpuset.cpus": "0-3", "cpuset/cpuset.mems": "0",
		"cpuset/" + cg + "/cpuset.cpus": "2", "cpuset/" + cg + "/cpuset.mems": "0",
		"memory/" + cg + "/memory.soft_limit_in_bytes": "67108864",
	})
	state := t.TempDir()
	store, err := cgroup.OpenFileStore(filepath.Join(state, agent.OriginalsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.RecordOriginals(map[string]string{
		"cpuset/" + cg + "/cpuset.cpus":                "0-3",
		"memory/" + cg + "/memory.soft_limit_in_bytes": "9223372036854771712",
		"cpuset/kubepods/podGone/c9/cpuset.cpus":       "0-3", // the pod ended
	}); err != nil {
		t.Fatal(err)
	}
	restored, gone, err := restoreOriginals(state, root, cgroup.V1)
	if err != nil {
		t.Fatal(err)
	}
	if restored != 2 || gone != 1 {
		t.Errorf("restored %d, gone %d; want 2 and 1", restored, gone)
	}
	for file, want := range map[string]string{"cpuset/" + cg + "/cpuset.cpus": "0-3",
		"memory/" + cg + "/memory.soft_limit_in_bytes": "9223372036854771712"} {
		b, _ := os.ReadFile(filepath.Join(root, file))
		if got := strings.TrimSpace(string(b)); got != want {
			t.Errorf("%s = %q, want the original %q", file, got, want)
		}
	}
	again, err := cgroup.OpenFileStore(filepath.Join(state, agent.OriginalsFile))
	if err != nil {
		t.Fatal(err)
	}
	if keys := again.Keys(); len(keys) != 0 {
		t.Errorf("originals left after the restore: %v", keys)
	}
}

func TestOwnerBeingRemoved(t *testing.T) {
	now := metav1.Now()
	client := fake.NewSimpleClientset(
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "locus", Name: "running"}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "locus", Name: "deleting", DeletionTimestamp: &now,
			Finalizers: []string{"foregroundDeletion"}}})
	for _, tc := range []struct {
		owner string
		want  bool
		err   string
	}{
		{"locus/running", false, ""}, // an upgrade or a restart
		{"locus/deleting", true, ""}, // kubectl delete --cascade=foreground
		{"locus/gone", true, ""},     // helm uninstall
		{"locus", false, "not NAMESPACE/NAME"},
		{"a/b/c", false, "not NAMESPACE/NAME"},
	} {
		got, err := ownerBeingRemoved(context.Background(), clientset.Wrap(client), tc.owner)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, %v; want %v, error with %q", tc.owner, got, err, tc.want, tc.err)
		}
	}
}
