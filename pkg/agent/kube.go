package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/locus-project/locus/pkg/kube/nodeagent"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

// KubeOptions configure the agent in Kubernetes mode.
type KubeOptions struct {
	// Agent is the reconcile loop's configuration (state dir, roots,
	// metrics); its Source and EventSink are set here.
	Agent Options
	// Source names the node and the ConfigMaps; Client is made from Config.
	Source nodeagent.SourceOptions
	// Config reaches the apiserver: in-cluster, or from a kubeconfig.
	Config *rest.Config
	// NRTMinInterval keeps NodeResourceTopology writes at least this far
	// apart (default 1s); NRTHeartbeat rewrites it at least this often
	// (default 1m; negative: only on change); NoNRT publishes none.
	NRTMinInterval time.Duration
	NRTHeartbeat   time.Duration
	NoNRT          bool
}

// RunKube watches the node's pods and the ConfigMaps and runs the reconcile
// loop on them until ctx ends (or once, with Agent.Once or Agent.DryRun).
func RunKube(ctx context.Context, o KubeOptions) error {
	if o.Agent.Logger == nil {
		o.Agent.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg := rest.CopyConfig(o.Config)
	cfg.UserAgent = "locus-agent/" + o.Source.NodeName
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	evCfg := rest.CopyConfig(cfg)
	evCfg.QPS, evCfg.Burst = nodeagent.EventQPS, nodeagent.EventBurst
	events, err := kubernetes.NewForConfig(evCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	o.Source.Client, o.Source.EventClient, o.Source.Logger = client, events, o.Agent.Logger
	o.Source.Quiet = o.Source.Quiet || o.Agent.DryRun
	if o.Source.StateDir == "" && !o.Agent.DryRun {
		if o.Source.StateDir = o.Agent.StateDir; o.Source.StateDir == "" {
			o.Source.StateDir = DefaultStateDir
		}
	}
	// A dry run changes nothing, in the cluster either.
	if !o.NoNRT && !o.Agent.DryRun {
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("kubernetes client: %w", err)
		}
		pub := nrt.NewPublisher(dyn, o.Agent.Logger)
		if o.NRTMinInterval > 0 {
			pub.MinInterval = o.NRTMinInterval
		}
		if o.NRTHeartbeat != 0 {
			pub.Heartbeat = max(o.NRTHeartbeat, 0)
		}
		o.Source.NRT = pub
	}
	src, err := nodeagent.NewSource(o.Source)
	if err != nil {
		return err
	}
	if err := src.Start(ctx); err != nil {
		return err
	}
	defer src.Stop()
	o.Agent.Source, o.Agent.EventSink = src, src.Emit
	a, err := New(o.Agent)
	if err != nil {
		return err
	}
	defer a.Close()
	err = a.Run(ctx)
	if o.Agent.Once && o.Source.NRT != nil {
		// The publisher's loop may not have run yet: publish before exiting.
		if perr := o.Source.NRT.PublishNow(ctx); perr != nil {
			o.Agent.Logger.Warn("cannot publish NodeResourceTopology", "err", perr)
		}
	}
	return err
}
