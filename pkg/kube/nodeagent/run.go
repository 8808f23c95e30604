package nodeagent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/locus-project/locus/pkg/kube/kubeclient"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

// RunOptions configure the agent's Kubernetes mode.
type RunOptions struct {
	// Source names the node and the ConfigMaps; Client is made from Config.
	Source SourceOptions
	// Config reaches the apiserver: in-cluster, or from a kubeconfig.
	Config *rest.Config
	// NRTMinInterval keeps NodeResourceTopology writes at least this far
	// apart (default 1s); NRTHeartbeat rewrites it at least this often
	// (default 1m; negative: only on change); NoNRT publishes none.
	NRTMinInterval time.Duration
	NRTHeartbeat   time.Duration
	NoNRT          bool
	// What Run needs of the agent's own options: its logger (default: text
	// on stderr), its state directory (where Source.StateDir defaults to,
	// but under DryRun), and whether it reconciles once or only prints.
	Logger       *slog.Logger
	StateDir     string
	DryRun, Once bool
}

// Run watches the node's pods and the ConfigMaps and runs the reconcile
// loop on them: agent runs it on the started Source (posting its events
// with Source.Emit) until ctx ends, or once with Once or DryRun.
func Run(ctx context.Context, o RunOptions, agent func(src *Source) error) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	cfg := ProtobufConfig(o.Config)
	cfg.UserAgent = "locus-agent/" + o.Source.NodeName
	client, err := kubeclient.New(cfg)
	if err != nil {
		return err
	}
	evCfg := rest.CopyConfig(cfg)
	evCfg.QPS, evCfg.Burst = EventQPS, EventBurst
	events, err := kubeclient.New(evCfg)
	if err != nil {
		return err
	}
	o.Source.Client, o.Source.EventClient, o.Source.Logger = client, events, o.Logger
	o.Source.Quiet = o.Source.Quiet || o.DryRun
	if o.Source.StateDir == "" && !o.DryRun {
		o.Source.StateDir = o.StateDir
	}
	// A dry run changes nothing, in the cluster either.
	if !o.NoNRT && !o.DryRun {
		// The NodeResourceTopology is a CRD, served in JSON only:
		// dynamic.NewForConfig asks for JSON whatever cfg says.
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("kubernetes client: %w", err)
		}
		pub := nrt.NewPublisher(dyn, o.Logger)
		if o.NRTMinInterval > 0 {
			pub.MinInterval = o.NRTMinInterval
		}
		if o.NRTHeartbeat != 0 {
			pub.Heartbeat = max(o.NRTHeartbeat, 0)
		}
		o.Source.NRT = pub
	}
	src, err := NewSource(o.Source)
	if err != nil {
		return err
	}
	if err := src.Start(ctx); err != nil {
		if ctx.Err() != nil {
			// Stopped while the caches synced (a SIGTERM soon after
			// start): nothing was changed yet, so this is a clean stop, as
			// the agent's own stop while starting is.
			o.Logger.Info("stopped before the node's pods were read")
			return nil
		}
		return err
	}
	defer src.Stop()
	err = agent(src)
	if o.Once && o.Source.NRT != nil {
		// The publisher's loop may not have run yet: publish before exiting.
		if perr := o.Source.NRT.PublishNow(ctx); perr != nil {
			o.Logger.Warn("cannot publish NodeResourceTopology", "err", perr)
		}
	}
	return err
}

// ProtobufConfig is a copy of cfg whose clients send protobuf and ask for
// it first, JSON second, as the kubelet's do: every request of the agent's
// client (pkg/kube/kubeclient: pods, ConfigMaps, Nodes, Events, DRA
// objects) is protobuf, whatever a client-go version defaults to. A
// resource served only in JSON (a CRD) is answered in JSON, and discovery
// is asked for in JSON.
func ProtobufConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.ContentType = runtime.ContentTypeProtobuf
	c.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	return c
}
