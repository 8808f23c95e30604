package topology

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" with err set
		err      string
	}{
		{in: "", want: ""},
		{in: "0-3,8,10-11\n", want: "0-3,8,10-11"},
		{in: "3,1,2,2,0-1", want: "0-3"},
		{in: "0-5,2-3,4-9", want: "0-9"},
		{in: "8191", want: "8191"},
		{in: "8192", err: `cpu "8192" is above the largest cpu id 8191`},
		{in: "0-9223372036854775807", err: "above the largest cpu id"},
		{in: "0-99999999999999999999999", err: "above the largest cpu id"},
		{in: "-1", err: "empty cpu number"},
		{in: "+1", err: `"+1" is not a cpu number`},
		{in: "1,,2", err: "empty cpu number"},
		{in: "3-1", err: `range "3-1" runs backwards`},
		{in: "1-2-3", err: `"2-3" is not a cpu number`},
		{in: "0, 1", err: `" 1" is not a cpu number`},
	} {
		got, err := ParseCPUList(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseCPUList(%q) = %v, %v; want error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("ParseCPUList(%q) = %q, %v; want %q", tc.in, got.String(), err, tc.want)
		}
	}
}

func TestParseNodeList(t *testing.T) {
	got, err := ParseNodeList("1,0-1,3")
	if err != nil || len(got) != 3 || got[0] != 0 || got[2] != 3 {
		t.Fatalf("ParseNodeList = %v, %v", got, err)
	}
	if _, err := ParseNodeList("1024"); err == nil || !strings.Contains(err.Error(), "above the largest node id 1023") {
		t.Fatalf("node 1024: %v", err)
	}
}

// TestParseCPUListHostile: whatever the text, a parse is cheap. Before the
// bound, "0-16000000" took 30 s and 1.15 GiB in cpuset.Parse.
func TestParseCPUListHostile(t *testing.T) {
	overlapping := strings.Repeat("0-8191,", MaxListLen/7-1) + "0"
	for _, in := range []string{
		"0-9223372036854775807",
		"0-16000000",
		overlapping,
		strings.Repeat("1", 1<<20),
		strings.Repeat("0,", MaxListLen),
	} {
		start := time.Now()
		_, err := ParseCPUList(in)
		if in != overlapping && err == nil {
			t.Errorf("ParseCPUList(%s) accepted", Quote(in))
		}
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("error repeats the hostile value: %d bytes", len(err.Error()))
		}
		// Generous: the point is seconds and gigabytes, not micro-timing.
		if d := time.Since(start); d > time.Second {
			t.Errorf("ParseCPUList(%s) took %v", Quote(in), d)
		}
	}
}

// FuzzParseCPUList: never panics, and agrees with cpuset.Parse on every
// list the latter reads within the bounds.
func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"", "0", "0-3,8", "3-1", "0-9223372036854775807", "1,,2", "0-8191,0-8191",
		"8192", "-1", "00-07", strings.Repeat("0-1,", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseCPUList(s)
		if err != nil {
			return
		}
		if got.Size() > MaxCPUID+1 {
			t.Fatalf("%d CPUs", got.Size())
		}
		s = strings.TrimSpace(s) // which cpuset.Parse does not
		if strings.Contains(s, "+") {
			return // cpuset.Parse reads signs
		}
		want, werr := cpuset.Parse(s)
		if werr != nil || !want.Equals(got) {
			t.Fatalf("ParseCPUList(%q) = %v; cpuset.Parse = %v, %v", s, got, want, werr)
		}
	})
}
