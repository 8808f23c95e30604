package execute

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
)

// With Recheck, a file confirmed to hold its decided value is not read
// again until its recheck: someone else's change to it (drift) stays until
// then and is repaired after, a new value is written at once, and the
// status reads the trusted text. So for pods and for a HostConfig's
// cgroups alike (a recreated cgroup is another matter: below).
func TestRecheckTrustsConfirmedFilesUntilDue(t *testing.T) {
	for _, pods := range []bool{true, false} {
		e, _, _, root := newExecutor(t, false)
		now := time.Unix(1000, 0)
		e.c.Pods, e.c.Recheck, e.c.Now = pods, 10*time.Second, func() time.Time { return now }
		file := filepath.Join(root, "pods/redis/cpuset.cpus")
		apply := func(value string) Report { t.Helper(); return writeRedisCPUs(t, e, value) }
		drift := func() {
			t.Helper()
			if err := os.WriteFile(file, []byte("0-7"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		holds := func(when, want string) {
			t.Helper()
			if got, _ := os.ReadFile(file); strings.TrimSpace(string(got)) != want {
				t.Errorf("pods %v, %s: cpuset.cpus = %q, want %q", pods, when, got, want)
			}
		}

		if rep := apply("4-5"); rep.Writes != 1 {
			t.Fatalf("pods %v: first apply wrote %d files", pods, rep.Writes)
		}
		drift()
		now = now.Add(4 * time.Second) // before any recheck (Recheck/2 at the soonest)
		rep := apply("4-5")
		holds("drifted, before the recheck", "0-7")
		if _, ok := rep.Seen["pods/redis"][cgroup.CPUSetCPUs]; ok {
			t.Errorf("pods %v: trusted file in the Apply's reads: was it read?", pods)
		}
		if got, err := e.Reader(rep.Seen).ReadKnob("pods/redis", cgroup.CPUSetCPUs); err != nil || got != "4-5" {
			t.Errorf("pods %v: status read the trusted file as %q (%v), want the text confirmed, not the drift", pods, got, err)
		}
		now = now.Add(7 * time.Second) // past Recheck since the first write
		apply("4-5")
		holds("drifted, after the recheck", "4-5")
		apply("6") // a new decision is written at once
		holds("decided anew", "6")
	}
}

// By default the status's own files are read again six times less often
// than the decided ones, and a pod's processes as often.
func TestStatusRecheckDefault(t *testing.T) {
	e, _, _, root := newExecutor(t, false)
	now := time.Unix(1000, 0)
	e.c.Pods, e.c.Recheck, e.c.Now = true, 10*time.Second, func() time.Time { return now }
	file := filepath.Join(root, "pods/redis/memory.high")
	procs := filepath.Join(root, "pods/redis/cgroup.procs")
	high := func() string {
		got, err := e.Reader(nil).ReadKnob("pods/redis", cgroup.MemoryHigh)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	pids := func() []int {
		got, err := e.Reader(nil).Procs("pods/redis")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	setFile(t, file, "max")
	setFile(t, procs, "1\n")
	high()
	pids()
	setFile(t, file, "1048576")
	setFile(t, procs, "2\n")
	now = now.Add(11 * time.Second) // past Recheck
	if got := pids(); len(got) != 1 || got[0] != 2 {
		t.Errorf("processes %v past Recheck, want [2]", got)
	}
	if got := high(); got != "max" {
		t.Errorf("memory.high read again as %q past Recheck, before 3 × Recheck", got)
	}
	now = now.Add(50 * time.Second) // past 6 × Recheck
	if got := high(); got != "1048576" {
		t.Errorf("memory.high %q past 6 × Recheck, want 1048576", got)
	}
}

// Rechecks of a node's files fall at different times, between Recheck/2
// and Recheck after their confirmation.
func TestRecheckDueTimesSpread(t *testing.T) {
	e := &Executor{c: Config{Recheck: 10 * time.Second}}
	now := time.Unix(0, 0)
	seen := map[time.Duration]bool{}
	for i := range 100 {
		d := e.dueAfter(now, filepath.Join("kubepods/pod", string(rune('a'+i%26)), string(rune('a'+i/26))), cgroup.CPUSetCPUs).Sub(now)
		if d < 5*time.Second || d > 10*time.Second {
			t.Fatalf("due after %s, outside [5s, 10s]", d)
		}
		seen[d.Round(time.Second)] = true
	}
	if len(seen) < 4 {
		t.Errorf("100 files' rechecks fall on %d distinct seconds: not spread", len(seen))
	}
}

// The files the status reads besides the decided ones are remembered under
// the same rule, for StatusRecheck.
func TestRecheckRemembersStatusReads(t *testing.T) {
	e, _, _, root := newExecutor(t, false)
	now := time.Unix(1000, 0)
	e.c.Pods, e.c.Recheck, e.c.StatusRecheck, e.c.Now = true, 2*time.Second, 10*time.Second, func() time.Time { return now }
	file := filepath.Join(root, "pods/redis/memory.high")
	set := func(v string) { t.Helper(); setFile(t, file, v) }
	read := func(want string) {
		t.Helper()
		if got, err := e.Reader(nil).ReadKnob("pods/redis", cgroup.MemoryHigh); err != nil || got != want {
			t.Errorf("memory.high read as %q, %v; want %q", got, err, want)
		}
	}
	set("max")
	read("max")
	set("1048576")
	read("max") // remembered
	// also past a reconcile that lists the file to restore but has no
	// original of it, so writes nothing (every file no decision sets)
	e.write(nil, []cgroup.Target{{Cgroup: "pods/redis", Knob: cgroup.MemoryHigh}}, map[string]string{"pods/redis": "redis"})
	read("max")
	now = now.Add(4 * time.Second) // past Recheck, before StatusRecheck/2
	read("max")
	now = now.Add(7 * time.Second)
	read("1048576")
	e.write(nil, nil, map[string]string{}) // no workload names the cgroup any more: forgotten
	set("2097152")
	read("2097152")
}

// A file restored to its original value (a decision no longer setting it,
// such as memory QoS turned off, while it sets others in the cgroup) is no
// longer the one confirmed: a decision setting it again writes it at once,
// and the status reads it anew.
func TestRecheckForgetsRestoredFiles(t *testing.T) {
	for _, pods := range []bool{true, false} {
		e, _, _, root := newExecutor(t, false)
		now := time.Unix(1000, 0)
		e.c.Pods, e.c.Recheck, e.c.Now = pods, 10*time.Second, func() time.Time { return now }
		if err := os.WriteFile(filepath.Join(root, "pods/redis/memory.high"), []byte("max"), 0o644); err != nil {
			t.Fatal(err)
		}
		owner := map[string]string{"pods/redis": "redis"}
		target := cgroup.Target{Cgroup: "pods/redis", Knob: cgroup.CPUSetCPUs}
		file := filepath.Join(root, "pods/redis/cpuset.cpus")
		holds := func(when, want string) {
			t.Helper()
			if got, _ := os.ReadFile(file); strings.TrimSpace(string(got)) != want {
				t.Errorf("pods %v, %s: cpuset.cpus = %q, want %q", pods, when, got, want)
			}
		}
		other := cgroup.Op{Cgroup: target.Cgroup, Knob: cgroup.MemoryHigh, Value: "max"} // decided until the end
		set := []cgroup.Op{other, {Cgroup: target.Cgroup, Knob: target.Knob, Value: "4-5"}}
		e.write(set, nil, owner)
		holds("set", "4-5")
		now = now.Add(time.Second)
		e.write([]cgroup.Op{other}, []cgroup.Target{target}, owner)
		holds("restored", "0-7")
		if got, _ := e.Reader(nil).ReadKnob(target.Cgroup, target.Knob); got != "0-7" {
			t.Errorf("pods %v: status read %q after the restore, want 0-7", pods, got)
		}
		now = now.Add(time.Second)
		if rep := e.write(set, nil, owner); rep.Writes != 1 {
			t.Errorf("pods %v: setting the restored file again wrote %d files", pods, rep.Writes)
		}
		holds("set again", "4-5")
		// The status's own read of a file is dropped when the executor
		// writes it, too.
		e.write([]cgroup.Op{other}, nil, owner)
		if got, _ := e.Reader(nil).ReadKnob(target.Cgroup, target.Knob); got != "4-5" {
			t.Fatalf("pods %v: status read %q", pods, got)
		}
		e.write([]cgroup.Op{other}, []cgroup.Target{target}, owner)
		e.write([]cgroup.Op{other}, nil, owner)
		if got, _ := e.Reader(nil).ReadKnob(target.Cgroup, target.Knob); got != "0-7" {
			t.Errorf("pods %v: status read %q of a file restored since its last read, want 0-7", pods, got)
		}
		// And of one written since, whose text the kernel may round, so the
		// status reads it back.
		e.write(set[1:], nil, owner) // memory.high decided no more
		if got, _ := e.Reader(nil).ReadKnob(target.Cgroup, cgroup.MemoryHigh); got != "max" {
			t.Fatalf("pods %v: status read memory.high %q", pods, got)
		}
		rep := e.write([]cgroup.Op{{Cgroup: target.Cgroup, Knob: cgroup.MemoryHigh, Value: "1048576"}}, nil, owner)
		if _, ok := rep.Seen[target.Cgroup][cgroup.MemoryHigh]; ok || rep.Writes != 1 {
			t.Fatalf("pods %v: memory.high written %d times, seen %v: nothing to test", pods, rep.Writes, ok)
		}
		if got, _ := e.Reader(rep.Seen).ReadKnob(target.Cgroup, cgroup.MemoryHigh); got != "1048576" {
			t.Errorf("pods %v: status read memory.high %q after it was written, want 1048576", pods, got)
		}
	}
}

// A new value for a file still trusted is written without reading the file
// first: the writer takes the text confirmed for what it holds. Past its
// recheck, or in a cgroup directory made anew, the file is read again.
func TestRecheckNewValueOfTrustedFileSkipsTheRead(t *testing.T) {
	e, _, _, root := newExecutor(t, false)
	now := time.Unix(1000, 0)
	e.c.Pods, e.c.Recheck, e.c.Now = true, 10*time.Second, func() time.Time { return now }
	dir := filepath.Join(root, "pods/redis")
	file := filepath.Join(dir, "cpuset.cpus")
	apply := func(value string) Report { t.Helper(); return writeRedisCPUs(t, e, value) }
	set := func(v string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	apply("4-5")
	// Behind the executor's back the file already holds the next value: a
	// writer that read it would find nothing to write.
	set("6")
	now = now.Add(time.Second)
	if rep := apply("6"); rep.Writes != 1 {
		t.Errorf("new value of a trusted file: %d writes, want 1 (the file is not read, its confirmed text stands for it)", rep.Writes)
	}
	// Past the recheck the file is read: it holds the value, nothing is written.
	set("7")
	now = now.Add(11 * time.Second)
	if rep := apply("7"); rep.Writes != 0 {
		t.Errorf("new value past the recheck: %d writes, want 0 (the file is read and holds it)", rep.Writes)
	}
	// A directory made anew is another: its file is read, not taken for
	// the one confirmed.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	set("8")
	now = now.Add(time.Second)
	if rep := apply("8"); rep.Writes != 0 {
		t.Errorf("new value in a recreated directory: %d writes, want 0 (the file is read and holds it)", rep.Writes)
	}
}

// writeRedisCPUs has e write the redis workload's cpuset.cpus, failing t
// on any error.
func writeRedisCPUs(t *testing.T, e *Executor, value string) Report {
	t.Helper()
	rep := e.write([]cgroup.Op{{Cgroup: "pods/redis", Knob: cgroup.CPUSetCPUs, Value: value}}, nil, map[string]string{"pods/redis": "redis"})
	if len(rep.Errors) > 0 {
		t.Fatal(rep.Errors)
	}
	return rep
}

// setFile writes a fixture tree's file, as someone else would.
func setFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The status takes a trusted file's text from the Apply that trusted it
// only: after a later Apply wrote it anew, the new text; after one that
// decided it no more, what the file holds (drift included), read again.
func TestStatusTakesTrustedFilesOfTheLastApplyOnly(t *testing.T) {
	e, _, _, root := newExecutor(t, false)
	now := time.Unix(1000, 0)
	e.c.Pods, e.c.Recheck, e.c.Now = true, time.Hour, func() time.Time { return now }
	owner := map[string]string{"pods/redis": "redis"}
	mems := cgroup.Op{Cgroup: "pods/redis", Knob: cgroup.CPUSetMems, Value: "0"}
	cpus := func(v string) cgroup.Op { return cgroup.Op{Cgroup: "pods/redis", Knob: cgroup.CPUSetCPUs, Value: v} }
	read := func(rep Report, k cgroup.Knob) string {
		t.Helper()
		got, err := e.Reader(rep.Seen).ReadKnob("pods/redis", k)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	setFile(t, filepath.Join(root, "pods/redis/cpuset.mems"), "0-1")
	if rep := e.write([]cgroup.Op{mems, cpus("4-5")}, nil, owner); rep.Writes != 2 || len(rep.Errors) > 0 {
		t.Fatalf("first apply wrote %d files: %v", rep.Writes, rep.Errors)
	}
	rep := e.write([]cgroup.Op{mems, cpus("4-5")}, nil, owner)
	if rep.Writes != 0 || read(rep, cgroup.CPUSetCPUs) != "4-5" {
		t.Fatalf("trusted apply wrote %d files, status read %q", rep.Writes, read(rep, cgroup.CPUSetCPUs))
	}
	rep = e.write([]cgroup.Op{mems, cpus("6")}, nil, owner)
	if got := read(rep, cgroup.CPUSetCPUs); got != "6" {
		t.Errorf("after a new value: status read %q, want 6", got)
	}
	setFile(t, filepath.Join(root, "pods/redis/cpuset.cpus"), "0-7") // drift, after the last write
	rep = e.write([]cgroup.Op{mems}, nil, owner)                     // cpuset.cpus decided no more
	if got := read(rep, cgroup.CPUSetCPUs); got != "0-7" {
		t.Errorf("a file the last Apply did not trust: status read %q, want what it holds, 0-7", got)
	}
	if got := read(rep, cgroup.CPUSetMems); got != "0" {
		t.Errorf("a file the last Apply trusted: status read %q, want 0", got)
	}
}
