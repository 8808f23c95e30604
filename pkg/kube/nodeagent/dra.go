package nodeagent

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/locus-project/locus/pkg/kube/draapi"
	"github.com/locus-project/locus/pkg/kube/kubeclient"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/workload"
)

// maxNodeSlices bounds the ResourceSlices of this node the agent reads: a
// node's drivers publish one or a few pools each.
const maxNodeSlices = 256

// draWatch follows Dynamic Resource Allocation for the node's pods: the
// ResourceSlices published for this node (where each device hangs off)
// and the ResourceClaims (which devices a pod was allocated). Its informers
// run with the source's; parsed and told are the reconcile loop's.
type draWatch struct {
	claims, slices cache.SharedIndexInformer
	events         *eventPoster
	log            *slog.Logger
	parsed         map[types.UID]parsedSlice
}

// parsedSlice is one slice read at one resource version, or why it is
// ignored.
type parsedSlice struct {
	version string
	devices map[workload.DRADevice]workload.DRAPlace
	err     error
}

// newDRAWatch watches the DRA objects when the API server serves them
// (resource.k8s.io/v1beta1); nil when it does not, and the agent reads no
// claims.
func newDRAWatch(ctx context.Context, client kubeclient.Interface, node string, events *eventPoster, log *slog.Logger, poke func()) *draWatch {
	if !draapi.Served(ctx, client) {
		log.Info("the API server does not serve " + resourceapi.SchemeGroupVersion.String() + ": devices of Dynamic Resource Allocation are not placed")
		return nil
	}
	// An informer the agent may not list would hold its start for ever (a
	// ClusterRole from before the agent read claims): asked once, first.
	if err := draapi.Listable(ctx, client); err != nil {
		log.Warn("devices of Dynamic Resource Allocation are not placed: "+err.Error(), "do", "grant resourceslices and resourceclaims list/watch (the chart's ClusterRole does)")
		return nil
	}
	d := &draWatch{events: events, log: log, parsed: map[types.UID]parsedSlice{}}
	sel := fields.OneTermEqualSelector("spec.nodeName", node).String()
	d.slices = cache.NewSharedIndexInformer(kubeclient.ListWatch(client, kubeclient.ResourceSlices, "", sel),
		&resourceapi.ResourceSlice{}, 0, cache.Indexers{})
	d.claims = cache.NewSharedIndexInformer(kubeclient.ListWatch(client, kubeclient.ResourceClaims, metav1.NamespaceAll, ""),
		&resourceapi.ResourceClaim{}, 0, cache.Indexers{})
	// Claims are watched cluster-wide (no field selects a node's): only
	// what the agent reads is kept, the allocated devices.
	_ = d.claims.SetTransform(func(obj any) (any, error) {
		if c, ok := obj.(*resourceapi.ResourceClaim); ok {
			return &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace, UID: c.UID, ResourceVersion: c.ResourceVersion},
				Status: resourceapi.ResourceClaimStatus{Allocation: c.Status.Allocation}}, nil
		}
		return obj, nil
	})
	_, _ = d.slices.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { poke() }, UpdateFunc: func(any, any) { poke() }, DeleteFunc: func(any) { poke() }})
	_, _ = d.claims.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { poke() },
		UpdateFunc: func(old, cur any) {
			o, _ := old.(*resourceapi.ResourceClaim)
			c, _ := cur.(*resourceapi.ResourceClaim)
			if o == nil || c == nil || !reflect.DeepEqual(o.Status.Allocation, c.Status.Allocation) {
				poke()
			}
		},
		DeleteFunc: func(any) { poke() }})
	return d
}

func (d *draWatch) informers() []cache.SharedIndexInformer {
	if d == nil {
		return nil
	}
	return []cache.SharedIndexInformer{d.slices, d.claims}
}

// published is every device the node's slices publish, with its place; a
// slice that cannot be read is ignored, told once as a Warning on it, and
// its pool named in ignored with why.
func (d *draWatch) published() (devices map[workload.DRADevice]workload.DRAPlace, ignored map[string]string) {
	objs := d.slices.GetStore().List()
	sort.Slice(objs, func(i, j int) bool {
		return objs[i].(*resourceapi.ResourceSlice).Name < objs[j].(*resourceapi.ResourceSlice).Name
	})
	devices, ignored = map[workload.DRADevice]workload.DRAPlace{}, map[string]string{}
	seen := map[types.UID]parsedSlice{}
	for i, obj := range objs {
		s := obj.(*resourceapi.ResourceSlice)
		p, ok := d.parsed[s.UID]
		if !ok || p.version != s.ResourceVersion {
			p = parsedSlice{version: s.ResourceVersion}
			if i >= maxNodeSlices {
				p.err = fmt.Errorf("this node has %d ResourceSlices, the agent reads at most %d", len(objs), maxNodeSlices)
			} else {
				p.devices, p.err = workload.ParseResourceSlice(s)
			}
			if p.err != nil {
				msg := fmt.Sprintf("ResourceSlice %s ignored: %v; its devices are placed as if unpublished", s.Name, p.err)
				d.log.Warn(msg)
				d.events.onObject(sliceRef(s), corev1.EventTypeWarning, "ResourceSliceIgnored", msg)
			}
		}
		seen[s.UID] = p
		if p.err != nil {
			ignored[s.Spec.Driver+"/"+s.Spec.Pool.Name] = fmt.Sprintf("ResourceSlice %s was ignored: %v", s.Name, p.err)
			continue
		}
		for k, v := range p.devices {
			devices[k] = v
		}
	}
	d.parsed = seen
	return devices, ignored
}

// podDevices places the devices a pod's allocated claims hold: its PCI
// addresses and the devices known by their node, and a problem naming
// each device it cannot place, or the claim text it cannot read.
func (d *draWatch) podDevices(pod *corev1.Pod, published map[workload.DRADevice]workload.DRAPlace, ignored map[string]string,
	t *topology.Topology) ([]string, []workload.NodeDevice, []workload.Problem) {
	names, err := workload.PodClaimNames(pod)
	problem := func(msg string) []workload.Problem {
		return []workload.Problem{{Reason: workload.ReasonDRADeviceUnplaced, Message: msg}}
	}
	if err != nil {
		return nil, nil, problem(fmt.Sprintf("the pod's claims cannot be read: %v; its CPUs are placed without its devices", err))
	}
	var held []workload.DRADevice
	var problems []workload.Problem
	for _, name := range names {
		obj, ok, _ := d.claims.GetStore().GetByKey(pod.Namespace + "/" + name)
		if !ok {
			continue // not created yet, or deleted: the pod does not run on it
		}
		devs, err := workload.ParseClaimAllocation(obj.(*resourceapi.ResourceClaim))
		if err != nil {
			problems = append(problems, problem(fmt.Sprintf("ResourceClaim %s/%s: %v; its CPUs are placed without that claim's devices", pod.Namespace, name, err))...)
			continue
		}
		for _, dev := range devs {
			if !slices.Contains(held, dev) {
				held = append(held, dev)
			}
		}
	}
	pci, nodes, unplaced := workload.PlaceDRADevices(held, published, t)
	for i, u := range unplaced {
		for pool, why := range ignored {
			if strings.HasPrefix(u, pool+"/") {
				unplaced[i] += ": " + why
			}
		}
	}
	if len(unplaced) > 0 {
		problems = append(problems, problem("devices it holds through its claims cannot be placed: "+strings.Join(unplaced, "; ")+"; its CPUs are placed without them")...)
	}
	return pci, nodes, problems
}

func sliceRef(s *resourceapi.ResourceSlice) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "ResourceSlice", APIVersion: resourceapi.SchemeGroupVersion.String(), Name: s.Name, UID: s.UID, ResourceVersion: s.ResourceVersion}
}

// draDevices is one reconcile's view of the node's published devices.
type draDevices struct {
	watch     *draWatch
	published map[workload.DRADevice]workload.DRAPlace
	ignored   map[string]string
}

func (s *Source) draDevices() draDevices {
	if s.dra == nil {
		return draDevices{}
	}
	pub, ign := s.dra.published()
	return draDevices{watch: s.dra, published: pub, ignored: ign}
}

// place gives a pinned pod the devices its claims hold, and adds the
// problems of those it cannot place to its own (a new slice: the memo's is
// not touched). A pod without CPUs of its own is placed as before.
func (d draDevices) place(pod *corev1.Pod, w workload.Workload, t *topology.Topology, problems []workload.Problem) ([]string, []workload.NodeDevice, []workload.Problem) {
	if d.watch == nil || !w.CPU.Exclusive || len(pod.Spec.ResourceClaims) == 0 {
		return w.Devices, w.NodeDevices, problems
	}
	pci, nodes, more := d.watch.podDevices(pod, d.published, d.ignored, t)
	for i := range more {
		more[i].Workload = w.Name
	}
	return pci, nodes, slices.Concat(problems, more)
}
