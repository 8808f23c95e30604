package numad

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// FuzzParse holds numad's command line, read from whoever runs `numad`, to
// three promises: it never panics or takes long, a question is within the
// bounds, and anything else is a short message with a non-zero exit (or the
// version, the only answer besides a question that exits 0).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"-w 2:1024", "-w2:1024", "-w 1.5", "-w x:y", "-w -1", "-w 1e", "-V", "-h",
		"-dvw 1", "-u 1 -w 1", "-w 1 extra", "-- -w", "-w 65536:1073741824", "-w 65537", "-w 1:1073741825"} {
		f.Add(s)
	}
	fuzzseed.Add(f, func(s string) string { return "-w " + s })
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		var got Invocation
		fuzzseed.Timed(t, "Parse", func() { got = Parse("numad", args) })
		switch {
		case got.Query != nil:
			if got.Query.CentiCPUs > MaxCPUs*100+99 || got.Query.MB > MaxMB || got.Stdout != "" || got.Stderr != "" || got.Exit != 0 {
				t.Fatalf("%q: %+v", args, got)
			}
		case got.Exit == 0:
			if !strings.Contains(got.Stdout, "version: "+Release) {
				t.Fatalf("%q: exit 0 without a question or the version: %+v", args, got)
			}
		default:
			if got.Stderr == "" || len(got.Stderr) > 1024 {
				t.Fatalf("%q: exit %d with stderr of %d bytes", args, got.Exit, len(got.Stderr))
			}
		}
	})
}

// FuzzParseQuery: any -w value is a bounded question or an error of bounded
// length.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"2:1024", "1.5", "1.999:0", "x:y", "-1", "1:", ":1", "1e", "99999999999", "0"} {
		f.Add(s)
	}
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, s string) {
		var q Query
		var err error
		fuzzseed.Timed(t, "ParseQuery", func() { q, err = ParseQuery(s) })
		if err != nil {
			fuzzseed.CheckError(t, err)
			if len(err.Error()) > 512 {
				t.Fatalf("%.80q: error of %d bytes", s, len(err.Error()))
			}
			return
		}
		if q.CentiCPUs > MaxCPUs*100+99 || q.MB > MaxMB || q.Bytes()>>20 != q.MB {
			t.Fatalf("%q: %+v out of bounds", s, q)
		}
	})
}
