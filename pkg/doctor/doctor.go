// Package doctor checks whether a host has what Locus needs: the cgroup
// controllers, the memory QoS files, the NUMA and memory settings that decide
// whether pinning pays, the kubelet's managers and the agent's privileges.
//
// A check is a function over an Env, the roots the host is read through
// (sysfs, procfs, cgroupfs, the kubelet's directory, the NRI socket), so the
// same checks run on this host and on fixture trees. A check only reads, and
// only below those roots; every file it reads is bounded, and a file that is
// missing, unreadable, truncated, huge or foreign turns into a warn or fail
// naming the path and the reason, never into a panic. Adding a check is one
// file: a function and a register call in its init.
package doctor

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/locus-project/locus/pkg/coresched"
)

// Status is a check's verdict.
type Status string

const (
	OK   Status = "ok"   // the host is as Locus wants it
	Warn Status = "warn" // Locus works, but something is skipped or fights it
	Fail Status = "fail" // Locus cannot do its job here until this is fixed
	NA   Status = "n/a"  // the check does not apply to this host
)

// rank orders statuses by severity, for the exit status and sorting.
func (s Status) rank() int {
	switch s {
	case Warn:
		return 1
	case Fail:
		return 2
	}
	return 0
}

// Result is what one check found and what to do about it.
type Result struct {
	Check  string `json:"check"`
	Status Status `json:"status"`
	Found  string `json:"found"`
	Do     string `json:"do,omitempty"`
}

// Env is where a check reads the host. Every path a check opens is one of
// these roots joined with a fixed relative path.
type Env struct {
	SysfsRoot  string // default /sys
	ProcRoot   string // default /proc
	CgroupRoot string // default /sys/fs/cgroup
	KubeletDir string // default /var/lib/kubelet
	// KubeletConfig is the kubelet's configuration file; default
	// KubeletDir/config.yaml.
	KubeletConfig string
	NRISocket     string // default /var/run/nri/nri.sock
	// BinRoot is where the host's programs are looked for (libvirt's
	// daemons, numad); default /.
	BinRoot string
	// Self is the locus binary a numad must be to be Locus; default the
	// running one.
	Self string
	// CoreSched asks the kernel whether it has core scheduling; nil: the
	// running kernel (coresched.Probe), which no root redirects.
	CoreSched func() coresched.Support
}

// Defaults of Env's fields.
const (
	DefaultSysfsRoot  = "/sys"
	DefaultProcRoot   = "/proc"
	DefaultCgroupRoot = "/sys/fs/cgroup"
	DefaultKubeletDir = "/var/lib/kubelet"
	DefaultNRISocket  = "/var/run/nri/nri.sock"
	DefaultBinRoot    = "/"
)

// WithDefaults fills the empty fields of e.
func (e Env) WithDefaults() Env {
	def := func(p *string, v string) {
		if *p == "" {
			*p = v
		}
	}
	def(&e.SysfsRoot, DefaultSysfsRoot)
	def(&e.ProcRoot, DefaultProcRoot)
	def(&e.CgroupRoot, DefaultCgroupRoot)
	def(&e.KubeletDir, DefaultKubeletDir)
	def(&e.KubeletConfig, filepath.Join(e.KubeletDir, "config.yaml"))
	def(&e.NRISocket, DefaultNRISocket)
	def(&e.BinRoot, DefaultBinRoot)
	if e.Self == "" {
		e.Self = selfExecutable()
	}
	return e
}

func (e Env) sys(rel ...string) string {
	return filepath.Join(append([]string{e.SysfsRoot}, rel...)...)
}
func (e Env) proc(rel ...string) string {
	return filepath.Join(append([]string{e.ProcRoot}, rel...)...)
}
func (e Env) cgroup(rel ...string) string {
	return filepath.Join(append([]string{e.CgroupRoot}, rel...)...)
}

// Check is one named check.
type Check struct {
	Name string
	// Order places the check in the table: related checks sit together.
	Order int
	Run   func(Env) Result
}

var registered []Check

// register adds a check; each check's file calls it from init.
func register(c Check) {
	if slices.ContainsFunc(registered, func(o Check) bool { return o.Name == c.Name }) {
		panic("doctor: check registered twice: " + c.Name)
	}
	registered = append(registered, c)
	slices.SortStableFunc(registered, func(a, b Check) int { return a.Order - b.Order })
}

// Checks lists every check, in table order.
func Checks() []Check { return slices.Clone(registered) }

// Run runs every check against env (defaults filled in). A check that
// panics on input nobody foresaw is reported as a fail of that check; the
// others still run.
func Run(env Env) []Result {
	env = env.WithDefaults()
	out := make([]Result, 0, len(registered))
	for _, c := range registered {
		out = append(out, runOne(c, env))
	}
	return out
}

func runOne(c Check, env Env) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			r = Result{Check: c.Name, Status: Fail, Found: fmt.Sprintf("the check itself failed: %v", p),
				Do: "report this as a bug in Locus, with the files the check reads"}
		}
	}()
	r = c.Run(env)
	r.Check = c.Name
	return r
}

// Worst is the most severe status among rs (OK when empty).
func Worst(rs []Result) Status {
	worst := OK
	for _, r := range rs {
		if r.Status.rank() > worst.rank() {
			worst = r.Status
		}
	}
	return worst
}

// ExitCode is `locus doctor`'s exit status for rs: 0 when nothing is wrong,
// 1 with a warn, 2 with a fail.
func ExitCode(rs []Result) int { return Worst(rs).rank() }
