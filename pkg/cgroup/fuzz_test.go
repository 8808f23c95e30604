package cgroup

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// The cgroup readers take what the kernel (or, through a cgroup a workload
// may write, the workload) left in the files; the originals store reads a
// file any root process can edit.

// FuzzParseSpans: accepted lists are normal, write back to themselves, and
// union and within agree with the sets they stand for.
func FuzzParseSpans(f *testing.F) {
	for _, s := range []string{"0-3,8", "8,0-3", "0-9223372036854775807,5", "9223372036854775807", "3-1", "1,2,3"} {
		f.Add(s, "0-1")
	}
	for _, s := range fuzzseed.Lists() {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		var sa, sb spans
		var ea, eb error
		fuzzseed.Timed(t, "parseSpans", func() { sa, ea = parseSpans(a); sb, eb = parseSpans(b) })
		fuzzseed.CheckError(t, ea)
		if ea != nil {
			return
		}
		checkNormal(t, a, sa)
		again, err := parseSpans(sa.String())
		if err != nil || !again.equal(sa) {
			t.Fatalf("parseSpans(%.100q) = %v, which reads back as %v, %v", a, sa, again, err)
		}
		if eb != nil {
			return
		}
		u := sa.union(sb)
		checkNormal(t, "union", u)
		if !sa.within(u) || !sb.within(u) {
			t.Fatalf("%v or %v not within their union %v", sa, sb, u)
		}
		if sa.within(sb) && sb.within(sa) && !sa.equal(sb) {
			t.Fatalf("%v and %v within each other but not equal", sa, sb)
		}
	})
}

func checkNormal(t *testing.T, in string, s spans) {
	t.Helper()
	for i, r := range s {
		if r.lo < 0 || r.lo > r.hi || (i > 0 && s[i-1].hi >= r.lo-1) {
			t.Fatalf("parseSpans(%.100q) = %v: not sorted, disjoint and non-adjacent", in, s)
		}
	}
}

func FuzzParseNumaStat(f *testing.F) {
	f.Add("anon N0=4096 N1=0\nfile N0=1 N1=2\n", uint64(1))
	f.Add("total=123 N0=100 N1=23\nhierarchical_total=5 N0=5\n", uint64(4096))
	f.Add("anon N0=18446744073709551615 N0=1\n", uint64(4096))
	f.Add("anon N9223372036854775807=1\n", uint64(1))
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add("anon N0="+s+"\n", uint64(4096))
	}
	f.Fuzz(func(t *testing.T, text string, unit uint64) {
		var m map[int]uint64
		var err error
		fuzzseed.Timed(t, "ParseNumaStat", func() { m, err = ParseNumaStat(text, []string{"anon", "total"}, unit) })
		fuzzseed.CheckError(t, err, "memory.numa_stat")
		if err != nil {
			return
		}
		if len(m) > strings.Count(text, "N") {
			t.Fatalf("%d nodes from %d fields", len(m), strings.Count(text, "N"))
		}
		// A count that does not fit is an error, never a wrapped small one.
		for _, line := range strings.Split(text, "\n") {
			fs := strings.Fields(line)
			if len(fs) < 2 || (fs[0] != "anon" && !strings.HasPrefix(fs[0], "total")) {
				continue
			}
			for _, kv := range fs[1:] {
				n, v, _ := strings.Cut(kv, "=")
				node, err1 := strconv.Atoi(strings.TrimPrefix(n, "N"))
				count, err2 := strconv.ParseUint(v, 10, 64)
				if err1 != nil || err2 != nil || unit == 0 {
					continue
				}
				if m[node] < count {
					t.Fatalf("node %d: sum %d below one count %d (unit %d): wrapped", node, m[int(node)], count, unit)
				}
			}
		}
	})
}

// FuzzOriginalsStore opens a hostile originals.json: a file that does not
// parse is set aside (the store starts empty and says why), one that parses
// keeps exactly its entries, and either way the store saves and reopens.
func FuzzOriginalsStore(f *testing.F) {
	f.Add(`{"format":"locus-cgroup-originals/v1","originals":{"cpuset/a/cpuset.cpus":"0-3"},"marks":{"a":1}}`)
	f.Add(`{"format":"locus-cgroup-originals/v1","originals":null}`)
	fuzzseed.Add(f, func(s string) string {
		q, _ := json.Marshal(s)
		return `{"format":"locus-cgroup-originals/v1","originals":{"cpuset/a/cpuset.cpus":` + string(q) + `}}`
	})
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		path := filepath.Join(t.TempDir(), "originals.json")
		if err := os.WriteFile(path, []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
		var s *FileStore
		var err error
		fuzzseed.Timed(t, "OpenFileStore", func() { s, err = OpenFileStore(path) })
		fuzzseed.CheckError(t, err, path)
		if err != nil {
			return
		}
		if len(s.Damage()) > fuzzseed.MaxErrorLen {
			t.Fatalf("damage report of %d bytes", len(s.Damage()))
		}
		var want storeFile
		if json.Unmarshal([]byte(raw), &want) != nil {
			if s.Damage() == "" || len(s.Keys()) != 0 {
				t.Fatalf("corrupt file not set aside: damage %q, %d keys", s.Damage(), len(s.Keys()))
			}
		} else if got := originals(s); !maps.Equal(got, want.Originals) && len(got)+len(want.Originals) > 0 {
			t.Fatalf("store holds %v, file %v", got, want.Originals)
		}
		if err := s.RecordOriginals(map[string]string{"x/cpu.weight": "100"}); err != nil {
			t.Fatal(err)
		}
		again, err := OpenFileStore(path)
		if err != nil || again.Damage() != "" {
			t.Fatalf("the store's own file does not reopen: %v %q", err, again.Damage())
		}
		if !maps.Equal(originals(again), originals(s)) {
			t.Fatalf("reopened %v, saved %v", originals(again), originals(s))
		}
	})
}

func originals(s *FileStore) map[string]string {
	out := map[string]string{}
	for _, k := range s.Keys() {
		out[k], _ = s.Original(k)
	}
	return out
}

// FuzzUsageReaders reads cpu.stat as a workload's cgroup may leave it.
func FuzzUsageReaders(f *testing.F) {
	f.Add("usage_usec 2500\nuser_usec 2000\n")
	f.Add("usage_usec 9223372036854775807\n")
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add("usage_usec " + s)
	}
	root := f.TempDir()
	h, err := Open(root, V2)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, stat string) {
		if err := os.WriteFile(filepath.Join(root, "cpu.stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
		var err error
		fuzzseed.Timed(t, "CPUUsage", func() {
			var used time.Duration
			used, err = h.CPUUsage("")
			if err == nil && used < 0 {
				t.Fatalf("CPUUsage = %v", used)
			}
		})
		fuzzseed.CheckError(t, err, "cpu.stat")
	})
}
