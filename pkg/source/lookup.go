package source

import (
	"context"
	"errors"
	"fmt"
)

// Lookup is offered by a source that can ask where its workloads come from
// for one pod it does not list yet: the Kubernetes source asks the API
// server, whose watch may lag behind the runtime creating the pod's
// containers. The NRI plugin uses it so that such a container is still
// created with the decision the reconcile loop would make for it. The pod
// is asked of the source, not built from what the runtime passes (the
// sandbox's labels and annotations, the container's OCI resources), because
// only the source's pod gives that decision exactly: requests, QoS class
// and every container's limits are the pod's, not the runtime's.
type Lookup interface {
	// Lookup asks for the pods named, and those found are listed from the
	// next Snapshot on, as if the watch had delivered them. It is called off
	// the reconcile loop, returns by the end of ctx, and says how many it
	// found; err says why the others were not.
	Lookup(ctx context.Context, pods []PodRef) (found int, err error)
}

// PodGoneError is in a Lookup's error for a pod the source's origin no
// longer has under that name: the runtime is making a container of a pod
// already deleted (its kubelet is behind the API server), so there is no one
// left to tell about it.
type PodGoneError struct {
	Namespace, Name, UID, Node string
}

func (e *PodGoneError) Error() string {
	return fmt.Sprintf("pod %s/%s with uid %s: gone from the API server (no pod of that name on node %s)", e.Namespace, e.Name, e.UID, e.Node)
}

// Is makes errors.Is match a PodGoneError of the same pod.
func (e *PodGoneError) Is(target error) bool {
	t, ok := target.(*PodGoneError)
	return ok && t.Namespace == e.Namespace && t.Name == e.Name
}

// Gone says whether err holds a PodGoneError for the pod namespace/name. A
// Lookup's error joins those of every pod it was asked for, so the one
// error can say one pod is gone and another not found for another reason.
func Gone(err error, namespace, name string) bool {
	return errors.Is(err, &PodGoneError{Namespace: namespace, Name: name})
}

// PodRef names a pod as the runtime knows it. Its fields come from outside
// the agent: the Lookup checks them before use.
type PodRef struct {
	Namespace, Name, UID string
}

// LookupOf is src's Lookup; nil when it offers none.
func LookupOf(src Source) Lookup {
	l, _ := src.(Lookup)
	return l
}
