package locality

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/topology"
)

// numa_maps and /proc/PID/status come from any process, which names its own
// mappings' files.

func FuzzParseNumaMaps(f *testing.F) {
	f.Add("7f0000000000 default anon=3 dirty=3 N0=2 N1=1 kernelpagesize_kB=4\n" +
		"7f1000000000 prefer (many):0-1 file=/a\\040b heap N1=512 kernelpagesize_kB=2048\n" +
		"7f2000000000 bind=static:0 stack huge N0=18446744073709551615 N0=1 kernelpagesize_kB=1048576\n")
	f.Add("ffffffffffffffff interleave:0-9223372036854775807 N1023=1 kernelpagesize_kB=4\n")
	fuzzseed.Add(f, func(s string) string { return "7f0000000000 default file=" + s + " N0=1 kernelpagesize_kB=4\n" })
	fuzzseed.Add(f, func(s string) string { return "7f0000000000 bind:" + s + " N0=1 kernelpagesize_kB=4\n" })
	f.Fuzz(func(t *testing.T, text string) {
		var maps []Mapping
		var err error
		fuzzseed.Timed(t, "ParseNumaMaps", func() { maps, err = ParseNumaMaps(text) })
		fuzzseed.CheckError(t, err, "numa_maps")
		if err != nil {
			return
		}
		if len(maps) > strings.Count(text, "\n")+1 {
			t.Fatalf("%d mappings from %d lines", len(maps), strings.Count(text, "\n")+1)
		}
		for _, m := range maps {
			if len(m.Nodes) > maxNodeID+1 {
				t.Fatalf("%d nodes", len(m.Nodes))
			}
			for id := range m.Nodes {
				if id < 0 || id >= maxNodeID {
					t.Fatalf("node %d", id)
				}
			}
			// Page counts times the page size never wrap below the counts.
			for id, b := range m.Bytes() {
				if m.Nodes[id] > 0 && b/1024/m.PageSizeKB != m.Nodes[id] {
					t.Fatalf("N%d=%d of %d kB pages is %d bytes: wrapped", id, m.Nodes[id], m.PageSizeKB, b)
				}
			}
			if _, err := ParseMemPolicy(m.Policy.String()); err != nil && m.Policy.Mode != "" {
				t.Fatalf("policy %+v writes %q, which does not read back: %v", m.Policy, m.Policy.String(), err)
			}
		}
	})
}

func FuzzParseCPUsAllowed(f *testing.F) {
	f.Add("Name:\tx\nCpus_allowed:\tff\nCpus_allowed_list:\t0-7\n")
	fuzzseed.Add(f, func(s string) string { return "Name:\tx\nCpus_allowed_list:\t" + s + "\n" })
	fuzzseed.Add(f, func(s string) string { return "Name:\t" + s + "\nCpus_allowed_list:\t0\n" })
	f.Fuzz(func(t *testing.T, text string) {
		var err error
		fuzzseed.Timed(t, "ParseCPUsAllowed", func() {
			set, perr := ParseCPUsAllowed(text)
			err = perr
			if perr == nil && (set.Size() > topology.MaxCPUID+1 || (set.Size() > 0 && set.List()[set.Size()-1] > topology.MaxCPUID)) {
				t.Fatalf("%d CPUs up to %v", set.Size(), set)
			}
		})
		fuzzseed.CheckError(t, err, "Cpus_allowed_list")
	})
}

func FuzzParseNodeMeminfo(f *testing.F) {
	f.Add("Node 0 MemTotal:       16318464 kB\nNode 0 MemFree:        6561884 kB\n")
	f.Add("Node 0 MemTotal: 9007199254740992 kB\nNode 0 MemFree: 9007199254740993 kB\n")
	fuzzseed.Add(f, func(s string) string { return "Node 0 MemTotal: " + s + " kB\nNode 0 MemFree: 1 kB\n" })
	f.Fuzz(func(t *testing.T, text string) {
		var m NodeMemory
		var err error
		fuzzseed.Timed(t, "ParseNodeMeminfo", func() { m, err = ParseNodeMeminfo(text) })
		fuzzseed.CheckError(t, err)
		// kB counts are bounded to 2^53 so that bytes never wrap.
		if err == nil && (m.Total > 1<<63 || m.Free > 1<<63) {
			t.Fatalf("%+v: wrapped", m)
		}
	})
}

// The kernel's release string is read from uname; a build may append
// anything to it.
func FuzzKernelUnitPages(f *testing.F) {
	for _, s := range []string{"6.1.0-18-amd64", "6.3", "6.18.2", "5.15.0+", "7", "", "6.", "x.y", "99999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, release string) {
		if n := KernelUnitPages(release); n != 1 && n != 512 {
			t.Fatalf("KernelUnitPages(%q) = %d, want 1 or 512", release, n)
		}
	})
}
