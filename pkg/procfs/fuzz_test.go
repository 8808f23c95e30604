package procfs

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// Any local user names its processes and writes their arguments: the
// /proc parsers must read whatever a process can make them show.

const statLine = "42 (a b) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 12345 1000 10 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"

func FuzzParseStat(f *testing.F) {
	f.Add(statLine)
	f.Add("1 ((x) ) S) Z 0 0 0 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 99999999999999999999")
	fuzzseed.Add(f, func(s string) string { return strings.Replace(statLine, "a b", s, 1) })
	f.Fuzz(func(t *testing.T, text string) {
		var st Stat
		var err error
		fuzzseed.Timed(t, "ParseStat", func() { st, err = ParseStat(text) })
		fuzzseed.CheckError(t, err, "stat")
		if err != nil {
			return
		}
		// The command name is the text between the first '(' and the last ')'.
		if !strings.Contains(text, "("+st.Comm+")") {
			t.Fatalf("comm %.100q is not in the text", st.Comm)
		}
	})
}

func FuzzParseOwner(f *testing.F) {
	f.Add("Name:\tx\nUid:\t0\t0\t0\t0\nGid:\t5\t5\t5\t5\n")
	f.Add("Uid:\t4294967295\t0\t0\t0\nGid:\t4294967296\t0\t0\t0\n")
	fuzzseed.Add(f, func(s string) string { return "Uid:\t" + s + "\t0\t0\t0\nGid:\t0\t0\t0\t0\n" })
	f.Fuzz(func(t *testing.T, text string) {
		var o Owner
		var err error
		fuzzseed.Timed(t, "ParseOwner", func() { o, err = ParseOwner(text) })
		fuzzseed.CheckError(t, err, "Uid", "Gid")
		if err != nil {
			return
		}
		for _, id := range append(o.UIDs[:], o.GIDs[:]...) {
			if id < 0 || id > 1<<32-1 {
				t.Fatalf("id %d out of range", id)
			}
		}
	})
}

func FuzzParseCPUTimes(f *testing.F) {
	f.Add("cpu 1 2 3 4 5 6 7 8 9 10\ncpu0 4705 356 584 3699 23 23 0 0 0 0\nintr 1\n")
	f.Add("cpu9223372036854775807 1 1 1 1\ncpu1 18446744073709551615 18446744073709551615 1 1 1 1 1 1\n")
	fuzzseed.Add(f, func(s string) string { return "cpu0 " + s + " 1 1 1\n" })
	f.Fuzz(func(t *testing.T, text string) {
		var m map[int]CPUTimes
		var err error
		fuzzseed.Timed(t, "ParseCPUTimes", func() { m, err = ParseCPUTimes(text) })
		fuzzseed.CheckError(t, err, "/proc/stat")
		if err != nil {
			return
		}
		if len(m) > strings.Count(text, "cpu") {
			t.Fatalf("%d CPUs from %d lines", len(m), strings.Count(text, "cpu"))
		}
		for id, c := range m {
			if id < 0 || c.Busy > c.Total {
				t.Fatalf("cpu%d: busy %d > total %d", id, c.Busy, c.Total)
			}
		}
	})
}

// FuzzSplitNUL is the cmdline and environ reader: it must give back the
// very bytes, split at NUL.
func FuzzSplitNUL(f *testing.F) {
	f.Add([]byte("a\x00b c\x00\x00"))
	for _, s := range fuzzseed.Texts() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		parts := splitNUL(b)
		if got, want := strings.Join(parts, "\x00"), strings.TrimRight(string(b), "\x00"); got != want {
			t.Fatalf("splitNUL(%.100q) = %.100q", b, parts)
		}
	})
}
