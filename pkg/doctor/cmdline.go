package doctor

import (
	"fmt"
	"strings"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

func init() {
	register(Check{Name: "isolated-cpus", Order: 100, Run: checkIsolated})
}

func checkIsolated(env Env) Result {
	path := env.proc("cmdline")
	s, err := readAttr(path)
	if err != nil {
		return unreadable(Warn, err, "cannot tell whether CPUs are isolated from the scheduler")
	}
	p, err := parseCmdline(s)
	if err != nil {
		return unreadable(Warn, &readErr{path: path, reason: err.Error()}, "fix the list on the kernel command line")
	}
	if p.isolcpus.Size() == 0 && p.nohzFull.Size() == 0 {
		return Result{Status: OK, Found: "no isolcpus= or nohz_full= on the kernel command line"}
	}
	var found []string
	if p.nohzFull.Size() > 0 {
		found = append(found, "nohz_full="+p.nohzFull.String()+" (no scheduler tick while one task runs: Locus uses these CPUs like any other, best for exclusive workloads)")
	}
	if p.isolcpus.Size() == 0 {
		return Result{Status: OK, Found: strings.Join(found, "; ")}
	}
	found = append([]string{"isolcpus=" + p.isolcpus.String() + " (the scheduler does not balance tasks onto them: Locus leaves them out of every pool)"}, found...)
	return Result{Status: Warn, Found: strings.Join(found, "; "),
		Do: "Locus cannot give these CPUs to workloads; drop isolcpus= from the kernel command line if Locus should manage them"}
}

type cmdlineCPUs struct{ isolcpus, nohzFull cpuset.CPUSet }

// parseCmdline finds isolcpus= and nohz_full= on a kernel command line. The
// last of each wins, as in the kernel; isolcpus's flags ("domain,managed_irq,
// 2-5") are dropped. Every list goes through topology.ParseCPUList.
func parseCmdline(s string) (cmdlineCPUs, error) {
	out := cmdlineCPUs{isolcpus: cpuset.New(), nohzFull: cpuset.New()}
	// Parameters after a lone "--" go to init, not to the kernel.
	if i := strings.Index(" "+s+" ", " -- "); i >= 0 {
		s = s[:max(i-1, 0)]
	}
	for _, f := range strings.Fields(s) {
		key, val, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		var dst *cpuset.CPUSet
		switch key {
		case "isolcpus":
			dst, val = &out.isolcpus, stripIsolFlags(val)
		case "nohz_full":
			dst = &out.nohzFull
		default:
			continue
		}
		set, err := topology.ParseCPUList(val)
		if err != nil {
			return out, fmt.Errorf("%s=: %w", key, err)
		}
		*dst = set
	}
	return out, nil
}

// stripIsolFlags drops the leading flag words of an isolcpus value.
func stripIsolFlags(v string) string {
	for {
		word, rest, ok := strings.Cut(v, ",")
		if !ok || word == "" || (word[0] >= '0' && word[0] <= '9') {
			return v
		}
		v = rest
	}
}
