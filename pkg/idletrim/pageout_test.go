package idletrim

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestReadOnlyMappingOf(t *testing.T) {
	const exe = "/usr/bin/locus"
	for _, tc := range []struct {
		line       string
		start, end uint64
		ok         bool
	}{
		{"00400000-01a2c000 r-xp 00000000 08:01 1234   /usr/bin/locus", 0x400000, 0x1a2c000, true},
		{"01a2c000-03000000 r--p 0162c000 08:01 1234   /usr/bin/locus", 0x1a2c000, 0x3000000, true},
		{"03000000-03100000 rw-p 02c00000 08:01 1234   /usr/bin/locus", 0, 0, false}, // its data
		{"03100000-03200000 r--p 00000000 08:01 99     /usr/bin/locus-other", 0, 0, false},
		{"7f0000000000-7f0000100000 r-xp 00000000 08:01 5 /lib/libc.so.6", 0, 0, false},
		{"c000000000-c004000000 rw-p 00000000 00:00 0", 0, 0, false}, // the heap
		{"00500000-00400000 r-xp 00000000 08:01 1234   /usr/bin/locus", 0, 0, false},
		{"zz-01 r-xp 00000000 08:01 1234   /usr/bin/locus", 0, 0, false},
		{"00400000 r-xp 00000000 08:01 1234   /usr/bin/locus", 0, 0, false},
		{"00400000-00500000 r 0 0 0 /usr/bin/locus", 0, 0, false},
		{"", 0, 0, false},
	} {
		start, end, ok := readOnlyMappingOf(tc.line, exe)
		if start != tc.start || end != tc.end || ok != tc.ok {
			t.Errorf("%q: %x-%x %v, want %x-%x %v", tc.line, start, end, ok, tc.start, tc.end, tc.ok)
		}
	}
}

func FuzzReadOnlyMappingOf(f *testing.F) {
	f.Add("00400000-01a2c000 r-xp 00000000 08:01 1234   /usr/bin/locus")
	f.Add("c000000000-c004000000 rw-p 00000000 00:00 0")
	f.Fuzz(func(t *testing.T, line string) {
		if start, end, ok := readOnlyMappingOf(line, "/usr/bin/locus"); ok && end <= start {
			t.Fatalf("%q: an empty or reversed range %x-%x accepted", line, start, end)
		}
	})
}

// TestPageOutExecutable hands the test binary's own pages back and checks
// that the process holds fewer of its file's pages after.
func TestPageOutExecutable(t *testing.T) {
	before := rssFileKiB(t)
	asked, err := PageOutExecutable()
	if errors.Is(err, ErrPageOutUnsupported) {
		t.Skipf("this kernel has no MADV_PAGEOUT: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	after := rssFileKiB(t)
	t.Logf("mappings of %d KiB; RssFile %d KiB -> %d KiB", asked>>10, before, after)
	if asked == 0 || after >= before || before-after < before/4 {
		t.Fatalf("RssFile %d KiB -> %d KiB after paging out %d KiB of mappings: want at least a quarter less", before, after, asked>>10)
	}
}

func rssFileKiB(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
