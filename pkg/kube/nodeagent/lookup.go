package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/locus-project/locus/pkg/kube/kubeclient"
	"github.com/locus-project/locus/pkg/kube/podplan"
	"github.com/locus-project/locus/pkg/source"
)

const (
	// lookupKeep is how long a pod found by Lookup is listed while the
	// watch has not delivered it: a watch lags by seconds; a pod it never
	// delivers was deleted meanwhile, and should not hold CPUs for long.
	lookupKeep = 2 * time.Minute
	// maxLookedUp bounds the pods kept so: past it the watch is too far
	// behind for lookups one at a time to help.
	maxLookedUp = 256
)

// lookedUp holds the pods Lookup found until the watch delivers them. It is
// written by Lookup (off the reconcile loop) and read by Snapshot.
type lookedUp struct {
	mu   sync.Mutex
	pods map[string]foundPod // by namespace/name
}

type foundPod struct {
	pod *corev1.Pod
	at  time.Time
}

// Lookup implements source.Lookup: it asks the API server for each pod,
// among those bound to this node, and lists those whose UID is the
// runtime's from the next Snapshot on. The request is a List narrowed by
// field selectors to one name on this node, not a Get: the agent's role
// grants list and watch of pods only. Without a resource version it is
// served from storage, not from a watch cache that may lag as the
// informer's does.
func (s *Source) Lookup(ctx context.Context, refs []source.PodRef) (int, error) {
	found := 0
	var errs []error
	for _, r := range refs {
		pod, err := s.lookupOne(ctx, r)
		if err == nil {
			err = s.looked.add(pod, s.now())
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		found++
	}
	if found > 0 {
		s.poke() // the reconcile loop takes the pods now, not at the watch's pace
	}
	return found, errors.Join(errs...)
}

// lookupOne lists the pod r names; the runtime's words are checked first.
func (s *Source) lookupOne(ctx context.Context, r source.PodRef) (*corev1.Pod, error) {
	if errs := validation.IsDNS1123Label(r.Namespace); len(errs) > 0 {
		return nil, fmt.Errorf("pod sandbox namespace %.64q: %s", r.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(r.Name); len(errs) > 0 {
		return nil, fmt.Errorf("pod sandbox name %.64q: %s", r.Name, strings.Join(errs, "; "))
	}
	if r.UID == "" || len(r.UID) > 64 {
		return nil, fmt.Errorf("pod %s/%s: pod sandbox uid %.64q: want 1 to 64 bytes", r.Namespace, r.Name, r.UID)
	}
	sel := fields.AndSelectors(fields.OneTermEqualSelector("metadata.name", r.Name),
		fields.OneTermEqualSelector("spec.nodeName", s.opts.NodeName))
	list, err := kubeclient.As[*corev1.PodList](s.opts.Client.Resource(kubeclient.Pods, r.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel.String()}))
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", r.Namespace, r.Name, err)
	}
	named := false
	for i := range list.Items {
		pod := &list.Items[i]
		if string(pod.UID) == r.UID {
			pod.ManagedFields = nil // never read, as the informer drops them
			return pod, nil
		}
		named = named || pod.Name == r.Name
	}
	if !named {
		// Read from storage, and a pod's node never changes once bound: no
		// pod of that name on this node means the runtime's was deleted.
		return nil, &source.PodGoneError{Namespace: r.Namespace, Name: r.Name, UID: r.UID, Node: s.opts.NodeName}
	}
	return nil, fmt.Errorf("pod %s/%s with uid %s: not bound to node %s in the API server", r.Namespace, r.Name, r.UID, s.opts.NodeName)
}

func (l *lookedUp) add(pod *corev1.Pod, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := podplan.Name(pod)
	if _, ok := l.pods[key]; !ok && len(l.pods) >= maxLookedUp {
		return fmt.Errorf("pod %s: %d pods found are still awaited from the watch; no more are kept", key, len(l.pods))
	}
	if l.pods == nil {
		l.pods = map[string]foundPod{}
	}
	l.pods[key] = foundPod{pod: pod, at: now}
	return nil
}

// listPods is the informer's pods and those Lookup found that it has not
// delivered yet. A pod found is forgotten once the informer has it (its
// UID), or after lookupKeep. One the informer holds under another UID is an
// older pod of that name (names are unique in the API server, and the
// runtime is creating the one found): the pod found stands for it.
func (s *Source) listPods() []*corev1.Pod {
	objs := s.pods.GetStore().List()
	l := &s.looked
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(objs)+len(l.pods))
	for _, obj := range objs {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			continue
		}
		if f, found := l.pods[podplan.Name(pod)]; found {
			if f.pod.UID != pod.UID {
				continue
			}
			delete(l.pods, podplan.Name(pod))
		}
		out = append(out, pod)
	}
	now := s.now()
	for key, f := range l.pods {
		if now.Sub(f.at) > lookupKeep {
			delete(l.pods, key)
			continue
		}
		out = append(out, f.pod)
	}
	return out
}

var _ source.Lookup = (*Source)(nil)
