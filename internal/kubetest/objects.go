package kubetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// requestTimeout bounds one helper's calls to the apiserver.
const requestTimeout = 30 * time.Second

func callContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	t.Cleanup(cancel)
	return ctx
}

// CreateNamespace creates a namespace with a generated name starting with prefix, so
// that tests sharing a control plane do not see each other's objects. There is no
// namespace controller to finish deleting it, so it is left in place.
func (cp *ControlPlane) CreateNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ns, err := cp.Client.CoreV1().Namespaces().Create(callContext(t),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create namespace %s-*: %v", prefix, err)
	}
	return ns.Name
}

// CreateNode registers a node the way a kubelet would: capacity and allocatable both
// set to capacity, condition Ready, and the kubernetes.io/hostname label. Nothing runs
// on it and nothing keeps it Ready; use kwok for nodes with a heartbeat.
func (cp *ControlPlane) CreateNode(t testing.TB, name string, capacity corev1.ResourceList) *corev1.Node {
	t.Helper()
	ctx := callContext(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   name,
		Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelOSStable: "linux"},
	}}
	created, err := cp.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create node %s: %v", name, err)
	}
	now := metav1.Now()
	created.Status = corev1.NodeStatus{
		Capacity:    capacity.DeepCopy(),
		Allocatable: capacity.DeepCopy(),
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now,
		}},
	}
	// Status is a subresource: the create above dropped it.
	updated, err := cp.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("kubetest: set status of node %s: %v", name, err)
	}
	return updated
}

// CreatePod creates pod (in its namespace, "default" if none) and returns it as stored.
func (cp *ControlPlane) CreatePod(t testing.TB, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ns := pod.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	created, err := cp.Client.CoreV1().Pods(ns).Create(callContext(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: create pod %s/%s: %v", ns, pod.Name, err)
	}
	return created
}

// BindPod assigns a pending pod to node through the pods/binding subresource, as a
// scheduler does (there is none here), and returns the pod as stored afterwards.
func (cp *ControlPlane) BindPod(t testing.TB, pod *corev1.Pod, node string) *corev1.Pod {
	t.Helper()
	return cp.BindPodAnnotated(t, pod, node, nil)
}

// BindPodAnnotated is BindPod with annotations on the Binding, which the
// apiserver copies onto the pod in the same write (as locus-scheduler
// writes its decision).
func (cp *ControlPlane) BindPodAnnotated(t testing.TB, pod *corev1.Pod, node string, annotations map[string]string) *corev1.Pod {
	t.Helper()
	ctx := callContext(t)
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, Annotations: annotations},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	pods := cp.Client.CoreV1().Pods(pod.Namespace)
	if err := pods.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("kubetest: bind pod %s/%s to node %s: %v", pod.Namespace, pod.Name, node, err)
	}
	bound, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kubetest: get pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return bound
}

// ServiceAccountConfig returns a client configuration that authenticates with a
// real token of the service account namespace/name (created if missing), issued by
// the TokenRequest API: RBAC treats it exactly as a pod running as that account.
// The token is bound to no object, so it carries no node's name; a pod's own
// token is PodServiceAccountConfig's.
func (cp *ControlPlane) ServiceAccountConfig(t testing.TB, namespace, name string) *rest.Config {
	t.Helper()
	return cp.serviceAccountConfig(t, namespace, name, nil)
}

// PodServiceAccountConfig returns a client configuration with the token the
// kubelet mounts into pod: its service account's (created if missing), bound
// to the pod, and so, once the pod is assigned a node, carrying that node's
// name as authentication.kubernetes.io/node-name in the user's extra info, as
// the apiserver (v1.32 and later, always) puts it there. The token dies with
// the pod.
func (cp *ControlPlane) PodServiceAccountConfig(t testing.TB, pod *corev1.Pod) *rest.Config {
	t.Helper()
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	return cp.serviceAccountConfig(t, pod.Namespace, sa,
		&authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID})
}

func (cp *ControlPlane) serviceAccountConfig(t testing.TB, namespace, name string, bound *authenticationv1.BoundObjectReference) *rest.Config {
	t.Helper()
	ctx := callContext(t)
	sas := cp.Client.CoreV1().ServiceAccounts(namespace)
	_, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("kubetest: create service account %s/%s: %v", namespace, name, err)
	}
	hour := int64(3600)
	tr, err := sas.CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour, BoundObjectRef: bound},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubetest: token for service account %s/%s: %v", namespace, name, err)
	}
	return &rest.Config{
		Host:            cp.APIServerURL,
		BearerToken:     tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.pki.caPEM},
	}
}

// WaitFor polls cond every 100 ms until it reports true, fails, or timeout passes;
// what names the wait in the failure message.
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last error
	for {
		ok, err := cond(ctx)
		if err != nil {
			last = err
		} else if ok {
			return
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("kubetest: timed out after %s waiting for %s", timeout, what)
			if last != nil {
				msg += fmt.Sprintf(" (last error: %v)", last)
			}
			t.Fatal(msg)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
