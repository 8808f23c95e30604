package doctor

import (
	"strings"

	"github.com/locus-project/locus/pkg/coresched"
)

func init() {
	register(Check{Name: "core-scheduling", Order: 95, Run: checkCoreSched})
}

// checkCoreSched says whether core isolation (locus.io/core-isolation,
// resource-qos-config's coreExpeller) can take effect: it needs SMT on and
// a kernel with core scheduling; where SMT is off it does not apply. The kernel is asked as the agent asks it,
// by a prctl on this thread, which changes nothing.
func checkCoreSched(env Env) Result {
	path := env.sys("devices/system/cpu/smt/active")
	smt, err := readAttr(path)
	switch {
	case err != nil:
		return Result{Status: NA, Found: "the kernel does not say whether SMT is on (" + err.Error() + "): core isolation matters only where it is"}
	case strings.TrimSpace(smt) != "1":
		return Result{Status: NA, Found: "SMT is off or absent: no core has a sibling, so core isolation has nothing to keep apart"}
	}
	probe := env.CoreSched
	if probe == nil {
		probe = coresched.Probe
	}
	s := probe()
	if s.Available {
		return Result{Status: OK, Found: "core scheduling " + s.Reason}
	}
	return Result{Status: Warn, Found: "core scheduling " + s.Reason,
		Do: "core isolation (locus.io/core-isolation, coreExpeller) is not applied here, so a BE task may run on the SMT sibling of an LS core: a kernel of Linux 5.14 or later built with CONFIG_SCHED_CORE enables it"}
}
