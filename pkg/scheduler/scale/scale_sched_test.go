package scale

import (
	"context"
	"fmt"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/configz"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"

	"github.com/locus-project/locus/pkg/scheduler/plugin"
)

// scheduler is one of the two under test, running in this process.
type scheduler interface{ Stop() error }

// kind names a scheduler under test.
type kind string

const (
	locus   kind = "locus-scheduler"
	vanilla kind = "kube-scheduler"
)

// start runs a scheduler of kind k with the same flags: no --config, so
// both run kube-scheduler's default profile as default-scheduler (locus-
// scheduler adds its plugin to it, weight 5) with the connection flags,
// leader election off and nothing served. koord-scheduler runs as its own
// process with the configuration Koordinator deploys (startKoord).
func start(t testing.TB, k kind, cfg config) (scheduler, error) {
	flags := []string{"--kubeconfig=" + cp.Kubeconfig,
		fmt.Sprintf("--kube-api-qps=%g", cfg.qps), fmt.Sprintf("--kube-api-burst=%d", cfg.burst)}
	switch k {
	case locus:
		return plugin.Start(context.Background(), "", flags...)
	case koord:
		return startKoord(t, cfg)
	}
	return startVanilla(flags...)
}

// vanillaServer is kube-scheduler v1.33 as its own command runs it, with
// no plugin registered beyond its own.
type vanillaServer struct {
	cancel context.CancelFunc
	done   chan error
}

// startVanilla is plugin.Start without the plugin: app.Setup and app.Run,
// with the same command-line handling.
func startVanilla(flags ...string) (*vanillaServer, error) {
	opts := options.NewOptions()
	reg := basecompatibility.NewComponentGlobalsRegistry()
	if err := reg.Register(basecompatibility.DefaultKubeComponent, compatibility.DefaultBuildEffectiveVersion(),
		utilfeature.DefaultMutableFeatureGate.DeepCopy()); err != nil {
		return nil, err
	}
	opts.ComponentGlobalsRegistry = reg
	fs := pflag.NewFlagSet("kube-scheduler", pflag.ContinueOnError)
	for _, f := range opts.Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(append([]string{"--leader-elect=false", "--secure-port=0"}, flags...)); err != nil {
		return nil, err
	}
	if err := reg.Set(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	cc, sched, err := app.Setup(ctx, opts)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("kube-scheduler: %w", err)
	}
	s := &vanillaServer{cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- app.Run(ctx, cc, sched) }()
	return s, nil
}

func (s *vanillaServer) Stop() error {
	s.cancel()
	err := <-s.done
	configz.Delete("componentconfig")
	if err == context.Canceled || (err != nil && err.Error() == "finished without leader elect") {
		err = nil
	}
	return err
}
