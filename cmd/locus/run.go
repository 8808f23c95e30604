package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/cgroup"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/execute"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/runner"
	"github.com/locus-project/locus/pkg/state"
)

// stragglerGrace is how long processes the command left in its cgroup get
// between SIGTERM and SIGKILL.
const stragglerGrace = time.Second

type runOptions struct {
	cpus                           int
	policy, strategy, qos          string
	cpuQoS                         string
	memRequest, memLimit, memQoS   string
	hugePages2Mi, hugePages1Gi     string
	stateDir, configFile           string
	cgroupRoot, cgroupVersion      string
	sysfsRoot, cgroupParent        string
	reservedCPUs                   string
	dryRun, parentSet, reservedSet bool
}

func newRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] [--] CMD [ARGS...]",
		Short: "Run a command on topology-aware CPUs in a cgroup of its own",
		Long: `Start CMD in a new cgroup <cgroup-parent>/run-<pid> with a cpuset chosen by the
topology-aware allocator and, optionally, a memory limit and memory QoS.

--cpus N gives the command N CPUs of its own (docs/allocator.md defines
--policy and --numa-strategy); without it the command runs in the shared pool:
every CPU not reserved and not held by the agent's workloads or other runs
(--qos BE: the agent's BE pool). cpuset.mems is the NUMA nodes of those CPUs.
The CPUs are taken under the agent's checkpoint lock (--state-dir) and held
as a lease until the command exits, so the agent and other runs route around
them. The command never runs outside its cgroup.

SIGINT, SIGTERM and SIGHUP are passed on to the command (a terminal's Ctrl-C
reaches it directly too). When it exits, processes it left in the cgroup get
SIGTERM, then SIGKILL; the cgroup and the lease are removed; and locus exits
with the command's status (128+N if signal N killed it). Bad input exits 2
before anything changes; --dry-run prints the decision and changes nothing.

--cpu-qos auto (the default) gives the class its CPU QoS: --qos BE makes the
cgroup SCHED_IDLE (cpu.idle 1; cpu.shares 2 where the kernel has no cpu.idle),
so it runs only on CPU time nothing else wants; LS keeps its weight.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("no command given: locus run [flags] -- CMD [ARGS...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.parentSet = cmd.Flags().Changed("cgroup-parent")
			o.reservedSet = cmd.Flags().Changed("reserved-cpus")
			return o.run(cmd.OutOrStdout(), args)
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // the command's own flags are not ours
	f.IntVar(&o.cpus, "cpus", 0, "CPUs of its own; 0 runs in the shared pool")
	f.StringVar(&o.policy, "policy", "",
		"full-pcpus, full-pcpus-then-threads, spread-by-pcpus, distribute-across-numa or static-burst (default: whole cores, then threads; see docs/allocator.md)")
	f.StringVar(&o.strategy, "numa-strategy", string(cpualloc.MostAllocated), "most-allocated or least-allocated")
	f.StringVar(&o.qos, "qos", "LS", "QoS class: LS or BE")
	f.StringVar(&o.memRequest, "memory-request", "", "memory request (64Mi); the base of memory QoS protection; with --cpus, held on the CPUs' NUMA nodes (the limit when no request)")
	f.StringVar(&o.hugePages2Mi, "hugepages-2Mi", "", "2 MiB huge pages (64Mi), with --cpus: held on the CPUs' NUMA nodes, which must have them free")
	f.StringVar(&o.hugePages1Gi, "hugepages-1Gi", "", "1 GiB huge pages (2Gi), with --cpus: held on the CPUs' NUMA nodes, which must have them free")
	f.StringVar(&o.memLimit, "memory-limit", "", "memory limit (1Gi): memory.limit_in_bytes (v1) or memory.max (v2)")
	f.StringVar(&o.memQoS, "memory-qos", "none", "auto applies the recommended memory QoS profile; none leaves the files alone")
	f.StringVar(&o.cpuQoS, "cpu-qos", "auto", "auto applies the class's CPU QoS (BE: cpu.idle 1, else the lowest cpu.shares); none leaves the files alone")
	f.StringVar(&o.stateDir, "state-dir", agent.DefaultStateDir, "the agent's state directory (checkpoint and lock)")
	f.StringVar(&o.configFile, "config", "", "the agent's HostConfig: read reservedCPUs, bePool, unrestrictedMems and cgroupParent")
	f.StringVar(&o.reservedCPUs, "reserved-cpus", "", "CPUs never handed out, in Linux list format (overrides --config)")
	f.StringVar(&o.cgroupRoot, "cgroup-root", cgroup.DefaultRoot, "where cgroups are mounted")
	f.StringVar(&o.cgroupVersion, "cgroup-version", "auto", "auto, v1 or v2")
	f.StringVar(&o.sysfsRoot, "sysfs-root", "/sys", "where sysfs is mounted")
	f.StringVar(&o.cgroupParent, "cgroup-parent", hostconfig.DefaultCgroupParent, "parent of the run's cgroup, relative to the cgroup root")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the decision and change nothing")
	return cmd
}

// newRunStubCmd is the hidden first stage of the command's process (see
// runner.RunStub); it is not for people.
func newRunStubCmd() *cobra.Command {
	return &cobra.Command{
		Use:                runner.StubArg,
		Hidden:             true,
		DisableFlagParsing: true,
		Run: func(_ *cobra.Command, args []string) {
			status, err := runner.RunStub(args)
			fmt.Fprintln(os.Stderr, "locus run:", err)
			os.Exit(status)
		},
	}
}

func (o *runOptions) run(out io.Writer, args []string) error {
	req, host, err := o.parse()
	if err != nil {
		return err
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return usagef("command %q: %v", args[0], err)
	}
	name := fmt.Sprintf("run-%d", os.Getpid())
	cg := o.cgroupParent + "/" + name
	// Decide once against the checkpoint as it is, read without the lock or
	// creating the state directory: an impossible request fails here, before
	// anything on the host changes. Acquire decides again under the lock.
	v, _ := cgroup.ParseVersion(o.cgroupVersion)
	h, err := cgroup.Open(o.cgroupRoot, v)
	if err != nil {
		return err
	}
	host.CPUIdle = h.KernelHas(cgroup.CPUIdle)
	cp, err := (&state.Store{Dir: o.stateDir}).Load()
	if err != nil {
		return err
	}
	runner.DropStale(&cp, h)
	d, err := runner.PlanRun(host, cp, req, cg)
	if err != nil {
		return runError(err)
	}
	if o.dryRun {
		_, err = io.WriteString(out, d.Describe())
		return err
	}
	// Listen before taking anything, so a signal cannot kill us between
	// taking the lease and handing the command its signals.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	s, err := o.session(h, host, name, cg)
	if err != nil {
		return err
	}
	if err := s.Acquire(req); err != nil {
		return runError(err)
	}
	for _, w := range s.Plan.Warnings {
		fmt.Fprintln(os.Stderr, "locus run: warning:", w)
	}
	if len(s.Unsupported) > 0 {
		fmt.Fprintf(os.Stderr, "locus run: this kernel lacks %s; skipped\n", strings.Join(s.Unsupported, ", "))
	}
	status, err := o.exec(s, path, args, sigs)
	if relErr := s.Release(stragglerGrace); relErr != nil {
		if err == nil && status == 0 {
			return relErr
		}
		fmt.Fprintln(os.Stderr, "locus run: cleanup:", relErr)
	}
	if err != nil {
		return err
	}
	if status != 0 {
		os.Exit(status)
	}
	return nil
}

// exec starts the command unless a signal already asked us to stop.
func (o *runOptions) exec(s *runner.Session, path string, args []string, sigs <-chan os.Signal) (int, error) {
	select {
	case sig := <-sigs:
		return runner.SignalStatus(sig), nil
	default:
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("find the locus binary to start the command: %w", err)
	}
	return s.Exec(self, path, args, sigs)
}

// session opens the state store and prepares the run's hold on the host.
func (o *runOptions) session(h *cgroup.Hierarchy, host runner.Host, name, cg string) (*runner.Session, error) {
	// The run removes only what it created; a memory store is enough, since
	// the lease names the cgroup should the run die before removing it.
	c, err := execute.NewCgroups(h, cgroup.NewMemoryStore())
	if err != nil {
		return nil, err
	}
	store, err := state.Open(o.stateDir)
	if err != nil {
		return nil, err
	}
	owner, err := runner.Self()
	if err != nil {
		return nil, err
	}
	return &runner.Session{Host: host, Cgroups: c, Store: store, Name: name, Cgroup: cg, Owner: owner}, nil
}

// runError makes requests that cannot be served usage errors (exit 2).
func runError(err error) error {
	if errors.Is(err, runner.ErrBadRequest) || errors.Is(err, cpualloc.ErrInsufficient) ||
		errors.Is(err, cpualloc.ErrInvalidRequest) {
		return usageError{err}
	}
	return err
}
