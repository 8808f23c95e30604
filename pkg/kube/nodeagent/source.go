// Package nodeagent is the agent's Kubernetes mode: it watches the pods bound
// to one node and the cluster's memory QoS ConfigMaps, hands them to the
// reconcile loop of pkg/agent as workloads, posts the agent's events on the
// pods, and publishes the node's NodeResourceTopology.
package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/cgwatch"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/decisionsig/keyfile"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/kube/earlypin"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/kube/podcgroup"
	"github.com/locus-project/locus/pkg/kube/podplan"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/workload"
)

// Source is an agent.WorkloadSource backed by the apiserver.
type Source struct {
	opts    SourceOptions
	log     *slog.Logger
	pods    cache.SharedIndexInformer
	node    cache.SharedIndexInformer // the agent's own Node, for its labels
	configs *configWatch
	dra     *draWatch // nil where the API server serves no DRA
	events  *eventPoster
	nrt     *nrt.Publisher
	changed chan struct{}
	urgent  chan struct{} // the configuration changed: not paced

	// Used by the reconcile loop only (Snapshot, Reconciled).
	driver  podcgroup.Driver
	memReq  map[string]cpualloc.Memory // memory and huge page needs, by workload
	movable map[string]bool            // the pods that may move (workload.MayMove), with moves on
	badPods map[string]string
	lagging laggingContainers
	looked  lookedUp          // pods found by Lookup, ahead of the watch
	memo    podplan.Memo      // pods converted, kept while nothing they depend on changes
	cgw     *cgwatch.Watch    // the pods' cgroup directories; nil before Start
	cgwTold bool              // its problem was posted
	podDirs map[string]string // each watched pod's directory by its cgroup, from the last addUnlisted
	// settled are the unlisted container cgroups seen holding their
	// cpuset (cgroup.Hierarchy.CPUSetFilled), not read again while they stay.
	settled map[string]bool
	cgroups *cgroup.Hierarchy
	earlyw  source.EarlyWriter // the agent's executor's early path
	early   *earlypin.Pinner   // the new containers of decided pods, between reconciles
	keys    *keyfile.File      // the scheduler's keys; nil without --decision-key-file
	devices *deviceReader      // the kubelet's PodResources; nil without its socket
	now     func() time.Time

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     sync.WaitGroup
}

// NewSource prepares the watches; Start runs them.
func NewSource(o SourceOptions) (*Source, error) {
	if o.NodeName == "" {
		return nil, errors.New("--node-name is required in Kubernetes mode")
	}
	if o.ConfigNamespace == "" {
		o.ConfigNamespace = DefaultConfigNamespace
	}
	if o.ResourceQoSConfigMap == "" {
		o.ResourceQoSConfigMap = DefaultResourceQoSConfigMap
	}
	if o.PodQoSConfigMap == "" {
		o.PodQoSConfigMap = DefaultPodQoSConfigMap
	}
	if o.PodResync <= 0 {
		o.PodResync = 5 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Source{opts: o, log: o.Logger, nrt: o.NRT, changed: make(chan struct{}, 1), urgent: make(chan struct{}, 1),
		driver: o.CgroupDriver, badPods: map[string]string{}, now: time.Now, early: earlypin.New(o.Logger)}
	if o.DecisionKeyFile != "" {
		s.keys = keyfile.New(o.DecisionKeyFile)
	} else {
		s.log.Warn("no --decision-key-file: no pod's " + workload.AnnotationResourceStatus + " is applied (opted-in pods get CPUs the agent chooses)")
	}
	if o.PodResourcesSocket != "" {
		s.devices = newDeviceReader(o.PodResourcesSocket, func() time.Time { return s.now() })
	}
	events := o.EventClient
	if events == nil {
		events = o.Client
	}
	var sink record.EventSink // a quiet poster posts nothing
	if !o.Quiet {
		sink = events.Events()
	}
	s.events = newEventPoster(sink, o.NodeName, o.Quiet)
	s.pods = podInformer(o.Client, o.NodeName, o.PodResync)
	if _, err := s.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.poke() },
		UpdateFunc: func(any, any) { s.poke() },
		DeleteFunc: func(any) { s.poke() },
	}); err != nil {
		return nil, err
	}
	s.node = nodeInformer(o.Client, o.NodeName)
	if _, err := s.node.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { s.pokeConfig() }, // its labels pick the nodeStrategies in force
		UpdateFunc: func(old, cur any) {
			if o, n := old.(*corev1.Node), cur.(*corev1.Node); o == nil || n == nil || !maps.Equal(o.Labels, n.Labels) {
				s.pokeConfig()
			}
		},
		DeleteFunc: func(any) { s.pokeConfig() },
	}); err != nil {
		return nil, err
	}
	s.configs = newConfigWatch(o, s.events, s.pokeConfig)
	return s, nil
}

// Start runs the watches and returns once every cache holds the current
// state: a reconcile before that would take the pods it has not seen yet
// for deleted ones and undo their settings.
func (s *Source) Start(ctx context.Context) error {
	ctx, s.cancel = context.WithCancel(ctx)
	s.dra = newDRAWatch(ctx, s.opts.Client, s.opts.NodeName, s.events, s.log, s.poke)
	informers := append(append([]cache.SharedIndexInformer{s.pods, s.node}, s.configs.informers...), s.dra.informers()...)
	var synced []cache.InformerSynced
	for _, inf := range informers {
		synced = append(synced, inf.HasSynced)
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			inf.RunWithContext(ctx)
		}()
	}
	s.cgw = s.newCgroupWatch()
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		s.cgw.Run(ctx)
	}()
	if s.nrt != nil {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			s.nrt.Run(ctx)
		}()
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		s.Stop()
		return fmt.Errorf("pods of node %s and ConfigMaps in %s: caches did not sync: %w", s.opts.NodeName, s.opts.ConfigNamespace, context.Cause(ctx))
	}
	s.configs.settle()
	s.log.Info("watching the node's pods and the cluster configuration", "node", s.opts.NodeName,
		"configMaps", s.opts.ConfigNamespace+"/"+s.opts.ResourceQoSConfigMap+","+s.opts.PodQoSConfigMap)
	return nil
}

// Stop ends the watches and the event posting; it waits for them.
func (s *Source) Stop() {
	s.stopOnce.Do(func() {
		if s.cancel != nil {
			s.cancel()
		}
		s.done.Wait()
		s.events.stop()
	})
}

func (s *Source) poke()       { notify(s.changed) }
func (s *Source) pokeConfig() { notify(s.urgent) }

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Name implements agent.WorkloadSource.
func (s *Source) Name() string { return "kubernetes node " + s.opts.NodeName }

// Changed implements agent.WorkloadSource.
func (s *Source) Changed() <-chan struct{} { return s.changed }

// Urgent implements source.Urgent: the ConfigMaps and the Node's labels.
func (s *Source) Urgent() <-chan struct{} { return s.urgent }

// Emit is the agent's event sink: it posts each event on its pod (or, for
// node-wide ones, on the Node).
func (s *Source) Emit(e eventlog.Event) { s.events.post(e) }

// Snapshot implements agent.WorkloadSource: every pod of the node whose
// cgroup exists, sorted by name, with the ConfigMaps' last good settings.
// A pod is mapped again only when it, or a cgroup its mapping looked for,
// changed (podplan.Memo).
func (s *Source) Snapshot(env source.Env) source.Snapshot {
	snap := source.Snapshot{Reserved: s.opts.Reserved, BEPool: cpuset.New(),
		SLO: s.configs.doc(), Error: s.configs.lastError(),
		MemoryQoSHeld: s.configs.held(), NodeLabels: nodeLabels(s.node, s.opts.NodeName),
		Moves: s.opts.Moves, Rebalance: s.opts.Rebalance}
	exists := s.opts.KubeletCgroupRoot.Exists(s.watchedExists(env.Exists))
	if s.driver == "" {
		d, ok := podcgroup.DetectDriver(exists)
		if !ok {
			snap.Error = joinErr(snap.Error, "cannot tell the kubelet's cgroup driver: expected exactly one of kubepods.slice (systemd) and kubepods (cgroupfs) under the kubelet cgroup root "+s.opts.KubeletCgroupRoot.String()+"; give --cgroup-driver or --kubelet-cgroup-root")
			return snap
		}
		s.driver = d // kept: the kubelet does not change drivers under running pods
		s.log.Info("kubelet cgroup driver detected", "driver", d)
	}
	s.readDevices()
	penv := podplan.Env{Driver: s.driver, Exists: exists, Topology: env.Topology, Trust: s.trust()}
	s.memReq, s.movable = map[string]cpualloc.Memory{}, map[string]bool{}
	lag := s.lagging.begin(s.now())
	live := map[string]*corev1.Pod{}
	bad := map[string]string{}
	var missing []string
	drad := s.draDevices()
	pods := s.listPods()
	// Sized once: a workload is a large value, and the list grown by
	// appends was 6 % of the bytes the agent allocated under a 300-pod churn.
	snap.Workloads = make([]source.Workload, 0, len(pods))
	for _, pod := range pods {
		if pod.Spec.NodeName != s.opts.NodeName || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		w, err := s.memo.FromPod(pod, penv)
		if errors.Is(err, podplan.ErrNoCgroup) {
			// Not set up by the kubelet yet, or torn down: normal while
			// pending or being deleted; a running pod without one is not.
			if pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil {
				missing = append(missing, podplan.Name(pod))
			}
			continue
		}
		if err != nil {
			bad[string(pod.UID)] = err.Error()
			if s.badPods[string(pod.UID)] != err.Error() {
				s.events.onPod(pod, corev1.EventTypeWarning, "PodNotManaged", fmt.Sprintf("%v; the agent leaves this pod alone", err))
			}
			continue
		}
		w.Plan.Cgroup = s.opts.KubeletCgroupRoot.Path(w.Plan.Cgroup)
		for i := range w.Plan.Containers {
			w.Plan.Containers[i].Cgroup = s.opts.KubeletCgroupRoot.Path(w.Plan.Containers[i].Cgroup)
		}
		w.Plan.Devices, w.Plan.NodeDevices, w.Problems = drad.place(pod, w.Plan, env.Topology, w.Problems)
		live[w.Plan.Name] = pod
		need, _ := workload.PodMemory(pod) // unreadable: none (the scheduler refuses such a pod)
		s.memReq[w.Plan.Name] = need
		// The kubelet's pins never get an assignment of Locus's, so the
		// report (which counts assignments only) needs no word of them.
		if ok, _ := workload.MayMove(w.Plan, false); ok && s.opts.Moves {
			s.movable[w.Plan.Name] = true
		}
		problems := lag.filter(w.Problems)
		if s.devices != nil {
			problems = append(problems, s.devices.setHeld(pod, &w.Plan)...)
		}
		snap.Workloads = append(snap.Workloads, source.Workload{Plan: w.Plan, Class: w.Class, Problems: problems})
	}
	s.addUnlisted(env, snap.Workloads)
	s.memo.Sweep()
	s.badPods = bad
	s.lagging.end(lag)
	if len(missing) > 0 {
		sort.Strings(missing)
		snap.Error = joinErr(snap.Error, fmt.Sprintf("%d running pods have no cgroup under the cgroup root (%s): are --cgroup-root and --cgroup-driver (%s) right?",
			len(missing), strings.Join(missing[:min(3, len(missing))], ", "), s.driver))
	}
	sort.Slice(snap.Workloads, func(i, j int) bool { return snap.Workloads[i].Plan.Name < snap.Workloads[j].Plan.Name })
	s.events.track(live)
	return snap
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// ensure the interfaces are met.
var (
	_ source.Source         = (*Source)(nil)
	_ source.Lookup         = (*Source)(nil)
	_ source.Watcher        = (*Source)(nil)
	_ source.DeviceReporter = (*Source)(nil)
	_ source.PodCPUSets     = (*Source)(nil)
)
