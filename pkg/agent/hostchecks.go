package agent

import (
	"github.com/locus-project/locus/pkg/doctor"
	"github.com/locus-project/locus/pkg/status"
)

// runHostChecks runs `locus doctor`'s checks once, at start, through the
// agent's own roots: the ones that are not ok are logged (once: the host's
// settings rarely change under a running agent, and a restart checks again),
// every one is exported as locus_host_check and kept for the status.
func (a *Agent) runHostChecks() {
	rs := doctor.Run(doctor.Env{SysfsRoot: a.opts.SysfsRoot, ProcRoot: a.opts.ProcRoot, CgroupRoot: a.h.Root(),
		KubeletDir: a.opts.Kubelet.Dir, KubeletConfig: a.opts.Kubelet.Config})
	a.hostChecks = make([]status.HostCheck, 0, len(rs))
	for _, r := range rs {
		a.hostChecks = append(a.hostChecks, status.HostCheck{Check: r.Check, Status: string(r.Status), Found: r.Found, Do: r.Do})
		if r.Status == doctor.Warn || r.Status == doctor.Fail {
			a.log.Warn("host check", "check", r.Check, "status", string(r.Status), "found", r.Found, "do", r.Do)
		}
	}
	a.metrics.SetHostChecks(a.hostChecks)
}
