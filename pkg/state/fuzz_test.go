package state

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// FuzzLoad reads a checkpoint as a crash, a full disk or a hand edit may
// leave it: Load answers in bounded time with a short error, or with a
// checkpoint whose CPU sets are bounded and which saves and loads back to
// itself.
func FuzzLoad(f *testing.F) {
	f.Add(`{"version":1,"assignments":{"redis":{"cpus":"2-3","policy":"full-pcpus"}},` +
		`"workloads":{"redis":{"cgroup":"locus.slice/redis","created":true,"started":{"pid":42,"startTime":7}}},` +
		`"leases":{"run-1":{"cgroup":"locus.slice/run-1","assignment":{"cpus":"4"},"owner":{"pid":9,"startTime":1}}}}`)
	f.Add(`{"version":1,"assignments":null,"workloads":null,"leases":null}`)
	f.Add(`{"version":1,"assignments":{"a":{"cpus":"1","memNodes":"0-1","memory":{"bytes":3,"hugepages2Mi":2097152},"memHeld":{"0":{"bytes":1},"1":{"bytes":2}}}}}`)
	f.Add(`{"version":1,"assignments":{"a":{"cpus":"1","near":"0,3"}}}`)
	fuzzseed.Add(f, func(s string) string {
		return `{"version":1,"assignments":{"a":{"cpus":"1","near":` + strconv.Quote(s) + `}}}`
	})
	fuzzseed.Add(f, func(s string) string {
		return `{"version":1,"assignments":{"a":{"cpus":"1","memNodes":` + strconv.Quote(s) + `,"memHeld":{` + strconv.Quote(s) + `:{"bytes":1}}}}}`
	})
	fuzzseed.Add(f, func(s string) string {
		return `{"version":1,"assignments":{"a":{"cpus":` + strconv.Quote(s) + `}},"leases":{"l":{"assignment":{"cpus":` + strconv.Quote(s) + `}}}}`
	})
	fuzzseed.Add(f, func(s string) string { return `{"version":1,"workloads":{"w":{"cgroup":` + strconv.Quote(s) + `}}}` })
	fuzzseed.Add(f, fuzzseed.Same)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.Path(checkpointFile), []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
		var c Checkpoint
		fuzzseed.Timed(t, "Load", func() { c, err = s.Load() })
		fuzzseed.CheckError(t, err, checkpointFile)
		if err != nil {
			return
		}
		if c.Assignments == nil || c.Workloads == nil || c.Leases == nil {
			t.Fatalf("a nil map in %+v", c)
		}
		for name, a := range c.Assignments {
			if a.CPUs.Size() > 8192 {
				t.Fatalf("assignment %q: %d CPUs", name, a.CPUs.Size())
			}
		}
		if err := s.Save(c); err != nil {
			t.Fatal(err)
		}
		back, err := s.Load()
		if err != nil {
			t.Fatalf("saved checkpoint does not load: %v", err)
		}
		a, _ := json.Marshal(c)
		b, _ := json.Marshal(back)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("saved\n%s\nloaded\n%s", a, b)
		}
	})
}
