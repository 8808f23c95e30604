package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A cgroup removed by its owner while a batch writes it (the kubelet tearing
// a pod down) fails that batch with ErrCgroupGone, the write reported Gone,
// not Failed; the other batches are written.
func TestCgroupRemovedMidWriteIsGone(t *testing.T) {
	for _, errno := range []unix.Errno{unix.ENOENT, unix.ENODEV} {
		t.Run(errno.Error(), func(t *testing.T) {
			f := newFixture(t, V1, false)
			f.mkcg("pod/a", "pod/b")
			w, rec := f.writer(NewMemoryStore())
			rec.fail = func(path, _ string) error {
				if strings.Contains(path, "pod/a/") {
					// The kernel unlinks the cgroup: its file fails to open
					// (ENOENT) or, opened just before, to write (ENODEV).
					for _, c := range f.controllers() {
						if err := os.RemoveAll(f.dir(c, "pod/a")); err != nil {
							t.Fatal(err)
						}
					}
					return errno
				}
				return nil
			}
			reps := w.ApplyBatches([]Batch{
				{Ops: []Op{{Cgroup: "pod/a", Knob: CPUShares, Value: "512"}, {Cgroup: "pod/a", Knob: CPUQuota, Value: "50000"}}},
				{Ops: []Op{{Cgroup: "pod/b", Knob: CPUShares, Value: "512"}}},
			})
			err := reps[0].Err
			var gone *GoneError
			if !errors.Is(err, ErrCgroupGone) || !errors.As(err, &gone) || gone.Cgroup != "pod/a" || !errors.Is(err, errno) {
				t.Fatalf("err = %v, want a GoneError for pod/a wrapping %v", err, errno)
			}
			if got := reps[0].Results; got[0].Outcome != Gone || got[1].Outcome != NotRun {
				t.Errorf("outcomes %s %s, want gone, not-run", got[0].Outcome, got[1].Outcome)
			}
			if reps[1].Err != nil || f.get(CPU, "pod/b", "cpu.shares") != "512" {
				t.Errorf("the other batch: %v, cpu.shares %s", reps[1].Err, f.get(CPU, "pod/b", "cpu.shares"))
			}
		})
	}
}

// A cgroup removed before the batch reads it, or while its files are read,
// is gone too; so is a restore of a cgroup that went away.
func TestCgroupRemovedBeforeWriteIsGone(t *testing.T) {
	f := newFixture(t, V1, true)
	f.mkcg("pod/a", "pod/b")
	store := NewMemoryStore()
	w, _ := f.writer(store)
	if _, err := w.Apply([]Op{{Cgroup: "pod/b", Knob: MemorySoftLimit, Value: "1048576"}}); err != nil {
		t.Fatal(err)
	}
	// Gone in one hierarchy only: v1 cgroups are removed one by one.
	if err := os.RemoveAll(f.dir(Memory, "pod/a")); err != nil {
		t.Fatal(err)
	}
	_, err := w.Apply([]Op{{Cgroup: "pod/a", Knob: CPUShares, Value: "512"}, {Cgroup: "pod/a", Knob: MemorySoftLimit, Value: "1048576"}})
	if !errors.Is(err, ErrCgroupGone) || !strings.Contains(err.Error(), `cgroup "pod/a" does not exist`) {
		t.Errorf("cgroup gone before the batch: %v", err)
	}
	if f.get(CPU, "pod/a", "cpu.shares") != "1024" {
		t.Error("a batch whose cgroup is gone wrote its other files")
	}
	// The directory is there but its file vanished as it was read (the
	// kernel removes the files with the directory): gone once the directory is.
	if err := os.Remove(filepath.Join(f.dir(Memory, "pod/b"), "memory.soft_limit_in_bytes")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Restore([]Target{{Cgroup: "pod/b", Knob: MemorySoftLimit}}); err == nil || errors.Is(err, ErrCgroupGone) {
		t.Errorf("a missing file in a cgroup that exists is an error, not gone: %v", err)
	}
	if err := os.RemoveAll(f.dir(Memory, "pod/b")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Restore([]Target{{Cgroup: "pod/b", Knob: MemorySoftLimit}}); !errors.Is(err, ErrCgroupGone) {
		t.Errorf("restore of a removed cgroup: %v", err)
	}
}

// A failed write to a cgroup that still exists stays a failure, even with
// ENOENT: only a removed cgroup is gone.
func TestWriteFailureOfLiveCgroupIsNotGone(t *testing.T) {
	f := newFixture(t, V1, false)
	f.mkcg("pod/a")
	w, rec := f.writer(NewMemoryStore())
	for _, errno := range []unix.Errno{unix.ENOENT, unix.EBUSY} {
		rec.fail = func(string, string) error { return errno }
		rep, err := w.Apply([]Op{{Cgroup: "pod/a", Knob: CPUShares, Value: "512"}})
		if err == nil || errors.Is(err, ErrCgroupGone) || !errors.Is(err, errno) || rep.Results[0].Outcome != Failed {
			t.Errorf("%v: err %v, outcome %s; want a plain failure", errno, err, rep.Results[0].Outcome)
		}
	}
}
