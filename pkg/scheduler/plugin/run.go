package plugin

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/configz"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedulerconfig "k8s.io/kubernetes/cmd/kube-scheduler/app/config"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/locus-project/locus/pkg/workload"
)

// Command is locus-scheduler's command line: kube-scheduler, its flags and
// its KubeSchedulerConfiguration, with this plugin registered.
func Command() *cobra.Command {
	cmd := app.NewSchedulerCommand(app.WithPlugin(Name, New))
	addFlags(cmd.Flags())
	cmd.Use = "locus-scheduler"
	cmd.Long = `locus-scheduler is kube-scheduler with Locus's topology-aware CPU plugin,
` + Name + `, registered. Enable it in the KubeSchedulerConfiguration given with
--config; for pods with cpuset-scheduler "true" it chooses the node and the exact
CPUs together (whole cores, one L3 cache or NUMA node where possible) and writes
them on the pod as ` + workload.AnnotationResourceStatus + ` for the Locus node agent.
Without --config it runs kube-scheduler's default configuration, as
default-scheduler, with the plugin added (--decision-key-file then names its
key file). Every other flag and setting is kube-scheduler's.`
	runE := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return withDefaultConfig(c.Flags(), func() error { return runE(c, args) })
	}
	return cmd
}

// Server is a scheduler running in this process (Start).
type Server struct {
	// Scheduler is the running scheduler; its Profiles hold the plugins.
	Scheduler *scheduler.Scheduler
	cancel    context.CancelFunc
	done      chan error
	plugins   []*Plugin
}

// Start runs locus-scheduler in this process, configured by configFile (a
// KubeSchedulerConfiguration whose clientConnection.kubeconfig names the
// cluster; "" for DefaultConfig, with --kubeconfig among flags) and
// kube-scheduler flags, until Stop or the end of ctx. It is for tests and
// benchmarks: leader election is off (losing a lease exits the process) and,
// unless flags say otherwise, nothing is served (--secure-port=0). Only one
// may run at a time. A --feature-gates flag sets Start's own copy of the
// gates, not the process's, which the framework reads when it builds its
// plugins and its DRA manager: a test turns a gate on for the framework
// with featuregatetesting on utilfeature.DefaultFeatureGate.
func Start(ctx context.Context, configFile string, flags ...string) (*Server, error) {
	opts := options.NewOptions()
	// Feature gates and versions of their own, as kube-scheduler's test
	// server does, so that a second Start does not find them already set.
	reg := basecompatibility.NewComponentGlobalsRegistry()
	if err := reg.Register(basecompatibility.DefaultKubeComponent, compatibility.DefaultBuildEffectiveVersion(),
		utilfeature.DefaultMutableFeatureGate.DeepCopy()); err != nil {
		return nil, err
	}
	opts.ComponentGlobalsRegistry = reg
	fs := pflag.NewFlagSet("locus-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	addFlags(fs)
	args := []string{"--leader-elect=false", "--secure-port=0"}
	if configFile != "" {
		args = append(args, "--config="+configFile)
	}
	if err := fs.Parse(append(args, flags...)); err != nil {
		return nil, err
	}
	if err := reg.Set(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Server{cancel: cancel, done: make(chan error, 1)}
	capture := func(ctx context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
		p, err := New(ctx, obj, h)
		if err == nil {
			s.plugins = append(s.plugins, p.(*Plugin))
		}
		return p, err
	}
	var cc *schedulerconfig.CompletedConfig
	err := withDefaultConfig(fs, func() (err error) {
		cc, s.Scheduler, err = app.Setup(ctx, opts, app.WithPlugin(Name, capture))
		return err
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("locus-scheduler: %w", err)
	}
	go func() { s.done <- app.Run(ctx, cc, s.Scheduler) }()
	return s, nil
}

// Stop stops the scheduler and waits for it.
func (s *Server) Stop() error {
	s.cancel()
	err := <-s.done
	configz.Delete("componentconfig")
	// Without leader election, app.Run says so when its context ends: the
	// normal way for an in-process scheduler to stop.
	if err == context.Canceled || (err != nil && err.Error() == "finished without leader elect") {
		err = nil
	}
	return err
}

// Plugins are the plugin's instances, one per profile that enables it.
func (s *Server) Plugins() []*Plugin { return s.plugins }
