package doctor

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/coresched"
)

func TestCoreSchedCheck(t *testing.T) {
	kernel := map[string]coresched.Support{
		"has it":   {Available: true, Reason: "available (prctl PR_SCHED_CORE)"},
		"lacks it": {Reason: "unavailable: the kernel has no PR_SCHED_CORE"},
	}
	cases := []struct {
		name, kernel, smt string
		want              Status
		words             string
	}{
		{"smt off", "has it", "0", NA, "no core has a sibling"},
		{"available", "has it", "1", OK, "available"},
		{"smt not said", "has it", "", NA, "does not say"},
		{"smt garbage", "lacks it", "x", NA, "off or absent"},
		{"unavailable", "lacks it", "1", Warn, "CONFIG_SCHED_CORE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			host := hostV2()
			if c.smt != "" {
				host = host.with("sys/devices/system/cpu/smt/active", c.smt+"\n")
			} else {
				host = host.with("sys/devices/system/cpu/smt", gone)
			}
			env := host.write(t)
			env.CoreSched = func() coresched.Support { return kernel[c.kernel] }
			r := checkCoreSched(env)
			if r.Status != c.want || !strings.Contains(r.Found+" "+r.Do, c.words) {
				t.Fatalf("got %s: %s (do: %s), want %s with %q", r.Status, r.Found, r.Do, c.want, c.words)
			}
		})
	}
	// Without a hook the running kernel is asked: whatever it says is no failure.
	if r := checkCoreSched(hostV2().write(t)); r.Status == Fail {
		t.Fatalf("this kernel: %s %s", r.Status, r.Found)
	}
}
