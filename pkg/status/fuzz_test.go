package status_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/status"
)

// FuzzReadStatus: `locus status` reads the file the agent wrote, or
// whatever is there instead: in bounded time, with an error naming the
// file, or a status that writes back to itself.
func FuzzReadStatus(f *testing.F) {
	f.Add(`{"time":"2024-01-01T00:00:00Z","config":"/etc/locus/hostconfig.yaml","node":{"cgroupVersion":"v2","cpus":"0-3"},` +
		`"workloads":[{"name":"redis","source":"config","cgroup":"locus.slice/redis","pool":"exclusive","cpus":"2-3",` +
		`"numaNodes":[0],"memoryQOS":{"enabled":true,"reason":"auto","values":{"memory.low":"0"}},"pids":[1,2],` +
		`"process":{"pid":5,"state":"running"}}]}`)
	fuzzseed.Add(f, func(s string) string { return `{"time":` + strconv.Quote(s) + `}` })
	fuzzseed.Add(f, func(s string) string { return `{"workloads":[{"pids":` + s + `}]}` })
	fuzzseed.Add(f, fuzzseed.Same)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw string) {
		if err := os.WriteFile(filepath.Join(dir, status.File), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		var st status.Status
		var err error
		fuzzseed.Timed(t, "ReadStatus", func() { st, err = status.Read(dir) })
		if err != nil {
			// Not fuzzseed.CheckError: its length is not bounded yet, as a
			// time field is repeated whole by encoding/json's error.
			if !strings.Contains(err.Error(), status.File) {
				t.Fatalf("error %.200q does not name %s", err, status.File)
			}
			return
		}
		out, err := json.Marshal(st)
		if err != nil {
			// A time outside what RFC 3339 can write (year 10000) decodes but
			// does not encode: not a property of the reader.
			return
		}
		var again status.Status
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("written back as %s, which does not read: %v", out, err)
		}
		if out2, _ := json.Marshal(again); string(out2) != string(out) {
			t.Fatalf("round trip changed\n%s\nto\n%s", out, out2)
		}
	})
}
