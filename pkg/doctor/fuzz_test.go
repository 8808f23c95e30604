package doctor

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// The files the checks parse come from the kernel, but also from whoever
// mounted a tree at a root: every parser must read anything in bounded time
// and say which field is wrong. The kubelet's config and checkpoints are
// parsed by pkg/kubelet, whose fuzz targets cover them.

func FuzzParseCmdline(f *testing.F) {
	f.Add("ro isolcpus=domain,managed_irq,2-3 nohz_full=1-7 -- init")
	fuzzseed.Add(f, func(s string) string { return "ro isolcpus=" + s + " quiet" })
	fuzzseed.Add(f, func(s string) string { return "nohz_full=" + s })
	f.Fuzz(func(t *testing.T, text string) {
		var err error
		fuzzseed.Timed(t, "parseCmdline", func() { _, err = parseCmdline(text) })
		fuzzseed.CheckError(t, err, "isolcpus=", "nohz_full=")
	})
}

func FuzzParseProcStatus(f *testing.F) {
	f.Add("Name:\tx\nUid:\t0\t0\t0\t0\nCapEff:\t000001ffffffffff\n")
	fuzzseed.Add(f, func(s string) string { return "Uid:\t0\t" + s + "\t0\t0\nCapEff:\t0\n" })
	fuzzseed.Add(f, func(s string) string { return "Uid:\t0\t0\t0\t0\nCapEff:\t" + s + "\n" })
	f.Fuzz(func(t *testing.T, text string) {
		var st procStatus
		var err error
		fuzzseed.Timed(t, "parseProcStatus", func() { st, err = parseProcStatus(text) })
		fuzzseed.CheckError(t, err, "Uid", "CapEff")
		if err == nil && (st.euid < 0 || st.euid > 1<<32-1) {
			t.Fatalf("uid %d accepted", st.euid)
		}
	})
}

func FuzzParseModes(f *testing.F) {
	f.Add("always [madvise] never")
	f.Add("#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t3\t1\t1\n")
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, text string) {
		fuzzseed.Timed(t, "parseSelected", func() {
			if m, ok := parseSelected(text); ok && !strings.Contains(text, "["+m+"]") {
				t.Fatalf("selected %q is not bracketed in the text", m)
			}
		})
		fuzzseed.Timed(t, "parseProcCgroups", func() { parseProcCgroups(text) })
		fuzzseed.Timed(t, "parseControllers", func() { parseControllers(text) })
	})
}
