package agent

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
)

// The cgroups Locus created are known apart from originals.json: once that
// file is lost (the agent restarted without it), removing the workloads
// still removes every cgroup Locus created, the workload's and the parent
// it made for it, in every hierarchy; and none it did not create.
func TestLostOriginalsStillRemovesCreatedCgroups(t *testing.T) {
	parent := realV1(t)
	// A cgroup of the test's own beside them: Locus did not make it, and
	// must leave it.
	theirs := filepath.Join(cgroup.DefaultRoot, "cpuset", parent+"-theirs")
	if err := os.Mkdir(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeDirs(t, theirs) })
	cfg := fmt.Sprintf("apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPUs: \"\"\ncgroupParent: %s\n", parent)
	job := cfg + fmt.Sprintf("workloads:\n- name: job\n  command: [sleep, \"600\"]\n- name: theirs\n  cgroup: %s-theirs\n  qosClass: BE\n", parent)
	dir := t.TempDir()
	file := filepath.Join(dir, "host.yaml")
	opts := Options{ConfigFile: file, StateDir: filepath.Join(dir, "state"), CgroupVersion: cgroup.V1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StopGrace: 2e9}
	run := func(cfg string) *Agent {
		t.Helper()
		if err := writeSettled(file, []byte(cfg)); err != nil {
			t.Fatal(err)
		}
		a, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		if res := a.Reconcile(); len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		return a
	}
	a := run(job)
	for _, c := range v1Controllers {
		if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, c, parent, "job")); err != nil {
			t.Fatalf("%s cgroup of job: %v", c, err)
		}
	}
	a.Close()
	if err := os.Remove(filepath.Join(opts.StateDir, OriginalsFile)); err != nil {
		t.Fatal(err)
	}
	a = run(job) // restarted without its originals, it adopts the running job
	a.Close()
	run(cfg + "workloads: []\n")
	for _, c := range v1Controllers {
		for _, rel := range []string{parent + "/job", parent} {
			if _, err := os.Stat(filepath.Join(cgroup.DefaultRoot, c, rel)); !os.IsNotExist(err) {
				t.Errorf("%s cgroup %s, which Locus created, left after its workload was removed: %v", c, rel, err)
			}
		}
	}
	if _, err := os.Stat(theirs); err != nil {
		t.Errorf("a cgroup Locus did not create was removed: %v", err)
	}
}
