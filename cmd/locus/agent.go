package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/cmd/internal/buildinfo"
	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/balancerloop"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/hostsource"
	"github.com/locus-project/locus/pkg/locality"
	"github.com/locus-project/locus/pkg/pace"
	"github.com/locus-project/locus/pkg/stopsignal"
	"github.com/locus-project/locus/pkg/supervisor"
)

func newAgentCmd() *cobra.Command {
	var o agent.Options
	var standalone bool
	var version, margin, logLevel string
	var kube kubeFlags
	pacer := pace.Default
	cmd := &cobra.Command{
		Use:   "agent (--standalone | --node-name NODE) [flags]",
		Short: "Run the node agent: bind workloads to CPUs and tune their memory QoS",
		Long: `Run the standalone node agent. It reads a HostConfig (--config; without it,
a built-in config that starts two gentle demo workloads), binds each workload
to CPUs and NUMA nodes, applies memory QoS, and keeps doing so as the config
and the machine change. State lives in --state-dir: the checkpoint that keeps
assignments across restarts, the original cgroup values to restore, status.json
(see "locus status") and events.jsonl (see "locus events").

--once reconciles once and exits (status 1 if a write failed); it does not
start command workloads. --dry-run prints the writes it would make and changes
nothing. docs/agent.md describes the config, the lifecycle and the metrics.

With --node-name instead of --standalone it manages the pods bound to that
Kubernetes node (docs/kubernetes.md): it watches them and the ConfigMaps
kube-system/ack-slo-config and ack-slo-pod-config, writes their cgroups as the
kubelet laid them out, posts events on the pods and publishes the node's
NodeResourceTopology.`,
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := kube.checkMode(cmd.Flags(), standalone); err != nil {
				return err
			}
			v, err := cgroup.ParseVersion(version)
			if err != nil {
				return usageError{err}
			}
			o.CgroupVersion, o.Out = v, cmd.OutOrStdout()
			if o.Logger, err = stderrLogger(logLevel); err != nil {
				return err
			}
			if margin != "" {
				if o.LocalityMargin, err = locality.ParseMargin(margin); err != nil {
					return usageError{fmt.Errorf("--locality-margin: %w", err)}
				}
			}
			if err := checkPace(pacer); err != nil {
				return err
			}
			o.Pace = &pacer
			if !o.Profiling {
				// Nothing can read the heap profile: keep no allocation
				// records (and no table of their stacks) for it.
				runtime.MemProfileRate = 0
			}
			build := buildinfo.Get()
			o.Version, o.Commit = build.Version, build.Commit
			ctx, stop := stopsignal.Context(context.Background())
			defer stop()
			o.Logger.Debug("soft memory limit", "from", setMemoryLimit(ctx, os.LookupEnv))
			if !standalone {
				return kube.run(ctx, o)
			}
			a, err := agent.New(o)
			if err != nil {
				return err
			}
			defer a.Close()
			return a.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&standalone, "standalone", false, "manage the workloads of a HostConfig (no Kubernetes)")
	addKubeFlags(f, &kube)
	f.StringVar(&o.ConfigFile, "config", "", "HostConfig file (default: the built-in demo config)")
	f.StringVar(&o.StateDir, "state-dir", agent.DefaultStateDir, "checkpoint, originals, status and events")
	f.StringVar(&o.SysfsRoot, "sysfs-root", "/sys", "where sysfs is mounted")
	f.StringVar(&o.ProcRoot, "proc-root", "/proc", "where procfs is mounted")
	f.StringVar(&o.CgroupRoot, "cgroup-root", cgroup.DefaultRoot, "where cgroups are mounted")
	f.StringVar(&version, "cgroup-version", "auto", "auto, v1 or v2")
	f.BoolVar(&o.Once, "once", false, "reconcile once and exit")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the writes a reconcile would make; change nothing")
	f.StringVar(&o.MetricsAddr, "metrics-addr", "127.0.0.1:19316", `serve /metrics and /healthz here, and /status and /ui unless --status-addr is another address ("" for none)`)
	f.StringVar(&o.StatusAddr, "status-addr", "", `serve /status, /ui (and /metrics, /healthz) here, leaving --metrics-addr to a scraper; keep it on loopback (default: at --metrics-addr)`)
	f.StringVar(&logLevel, "log-level", "info", "least level logged to stderr: debug (adds each reconcile's duration and writes), info, warn or error")
	f.BoolVar(&o.Profiling, "profiling", false, "also serve Go's profiles under /debug/pprof/ at --status-addr (for finding where time goes)")
	f.DurationVar(&o.Resync, "resync", 10*time.Second, "reconcile at least this often")
	f.IntVar(&pacer.Ratio, "reconcile-pace", pace.Default.Ratio, "in a burst of changes, a reconcile starts no sooner than this many times the last one's duration after it ended (0: at every change, unpaced)")
	f.DurationVar(&pacer.Bound, "reconcile-pace-bound", pace.Default.Bound, "the longest a change waits for --reconcile-pace (0: unpaced)")
	f.DurationVar(&o.ConfigSettle, "config-settle", hostsource.DefaultConfigSettle, "act on a changed --config once it has stayed the same this long (a half-written file is never acted on)")
	f.DurationVar(&o.StopGrace, "stop-grace", 10*time.Second, "wait this long after SIGTERM before SIGKILL when stopping a workload")
	f.BoolVar(&o.V1SoftLimitForLow, "memory-v1-soft-limit", false, "on upstream cgroup v1, approximate memory.low with memory.soft_limit_in_bytes")
	f.BoolVar(&o.ThrottleNotBelowRequest, "memory-high-not-below-request", false, "memory QoS: raise memory.high to the request when limit × throttlingPercent / 100 is below it (a Locus extension; off applies the formula as written)")
	f.DurationVar(&o.DebugWriteDelay, "debug-write-delay", 0, "sleep between reconcile steps (for crash tests)")
	f.DurationVar(&o.LocalityBudget, "locality-budget", locality.DefaultBudget, "memory locality: longest a workload's thread may wait for a page of its memory to move")
	f.StringVar(&margin, "locality-margin", "", `memory locality: free memory a target node keeps, "256Mi", "3%" or both (default max(256Mi, 3%))`)
	f.DurationVar(&o.StaleAfter, "healthz-stale-after", 0, "/healthz fails when no reconcile completed, or one has run, this long (default max(3 × --resync, 30s))")
	balancerloop.AddFlags(f, &o.NUMABalancer)
	_ = f.MarkHidden("debug-write-delay")
	return withCleanStop(cmd)
}

// newShimCmd is the hidden helper that starts a command workload inside its
// cgroup; see supervisor.ShimCommand.
func newShimCmd() *cobra.Command {
	return &cobra.Command{
		Use:                supervisor.ShimCommand + " ROOT VERSION CGROUP COMMAND [ARG...]",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			err := supervisor.ExecInCgroup(args)
			os.Stderr.WriteString("locus: " + err.Error() + "\n")
			os.Exit(127) // like a shell that cannot run the command
			return nil
		},
	}
}

// checkPace names the flag a bad pace came from.
func checkPace(p pace.Pacer) error {
	if err := pace.CheckRatio(p.Ratio); err != nil {
		return usageError{fmt.Errorf("--reconcile-pace %w", err)}
	}
	if err := pace.CheckBound(p.Bound); err != nil {
		return usageError{fmt.Errorf("--reconcile-pace-bound %w", err)}
	}
	return nil
}
