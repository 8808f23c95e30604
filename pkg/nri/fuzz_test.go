package nri

import (
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// The runtime's view of a running container (its cpuset lists, unified
// values, soft limit) is outside text: comparing it with the decision must
// neither panic nor allocate by what it says, and a list equal to the
// wanted one, however written, must not differ.
func FuzzDiffers(f *testing.F) {
	f.Add("0-3|0,1,2,3")
	f.Add("2-1|1-2")
	fuzzseed.Add(f, func(s string) string { return s + "|0-1" })
	fuzzseed.Add(f, func(s string) string { return "0|" + s })
	f.Fuzz(func(t *testing.T, raw string) {
		cur, want, _ := strings.Cut(raw, "|")
		v := Values{CPUs: cur, Mems: cur, Unified: map[string]string{"memory.low": cur}}
		w := Values{CPUs: want, Mems: want}
		start := time.Now()
		_ = differs(v, w)
		if d := time.Since(start); d > fuzzseed.Budget {
			t.Errorf("comparing %q with %q took %s", cur, want, d)
		}
		if want != "" && differs(Values{CPUs: want, Mems: want}, w) {
			t.Errorf("%q differs from itself", want)
		}
	})
}
