package kubeclient_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/locus-project/locus/internal/kubetest"
	"github.com/locus-project/locus/pkg/kube/kubeclient"
)

var cp *kubetest.ControlPlane

func TestMain(m *testing.M) { kubetest.Main(m, &cp) }

// TestClientAgainstAPIServer asks a real API server for each kind the agent
// reads or writes, in protobuf and in JSON, and checks the answers against
// what the admin's clientset created: lists, field selectors, gets, watches,
// deletes, Events created, updated and patched, discovery, and not-found
// errors kept as the API's.
func TestClientAgainstAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := cp.Client
	mustCreate := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ns := "kubeclient"
	mustCreate(admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))
	mustCreate(admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a"}}}, metav1.CreateOptions{}))
	pod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	}
	mustCreate(admin.CoreV1().Pods(ns).Create(ctx, pod("on-n1", "n1"), metav1.CreateOptions{}))
	mustCreate(admin.CoreV1().Pods(ns).Create(ctx, pod("on-n2", "n2"), metav1.CreateOptions{}))
	mustCreate(admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"},
		Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}))
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
	mustCreate(admin.AppsV1().DaemonSets(ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "agent"},
		Spec: appsv1.DaemonSetSpec{Selector: sel, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel.MatchLabels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}}}, metav1.CreateOptions{}))

	for _, content := range []string{runtime.ContentTypeProtobuf, runtime.ContentTypeJSON} {
		t.Run(content, func(t *testing.T) {
			cfg := rest.CopyConfig(cp.Config)
			cfg.ContentType, cfg.AcceptContentTypes = content, content
			c, err := kubeclient.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			onN1 := fields.OneTermEqualSelector("spec.nodeName", "n1").String()
			obj, err := c.Resource(kubeclient.Pods, "").List(ctx, metav1.ListOptions{FieldSelector: onN1})
			if err != nil {
				t.Fatal(err)
			}
			if pods, ok := obj.(*corev1.PodList); !ok || len(pods.Items) != 1 || pods.Items[0].Name != "on-n1" || pods.ResourceVersion == "" {
				t.Fatalf("pods on n1: %#v", obj)
			}
			obj, err = c.Resource(kubeclient.Pods, ns).Get(ctx, "on-n2")
			if p, ok := obj.(*corev1.Pod); err != nil || !ok || p.Spec.NodeName != "n2" {
				t.Fatalf("get on-n2: %v, %#v", err, obj)
			}
			if _, err := c.Resource(kubeclient.Pods, ns).Get(ctx, "missing"); !apierrors.IsNotFound(err) {
				t.Errorf("get missing: %v, want not found", err)
			}
			obj, err = c.Resource(kubeclient.Nodes, "").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=n1"})
			if nodes, ok := obj.(*corev1.NodeList); err != nil || !ok || len(nodes.Items) != 1 || nodes.Items[0].Labels["zone"] != "a" {
				t.Fatalf("nodes: %v, %#v", err, obj)
			}
			obj, err = c.Resource(kubeclient.ConfigMaps, ns).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=cfg"})
			if cms, ok := obj.(*corev1.ConfigMapList); err != nil || !ok || len(cms.Items) != 1 || cms.Items[0].Data["k"] != "v" {
				t.Fatalf("configmaps: %v, %#v", err, obj)
			}
			for k, want := range map[kubeclient.Kind]runtime.Object{kubeclient.ResourceSlices: &resourceapi.ResourceSliceList{},
				kubeclient.ResourceClaims: &resourceapi.ResourceClaimList{}} {
				obj, err := c.Resource(k, "").List(ctx, metav1.ListOptions{Limit: 1})
				if err != nil || reflect.TypeOf(obj) != reflect.TypeOf(want) {
					t.Fatalf("%s: %v, %T", k, err, obj)
				}
			}
			obj, err = c.Resource(kubeclient.DaemonSets, ns).Get(ctx, "agent")
			if ds, ok := obj.(*appsv1.DaemonSet); err != nil || !ok || ds.Spec.Selector.MatchLabels["app"] != "agent" {
				t.Fatalf("daemonset: %v, %#v", err, obj)
			}

			// A watch from the list's version sees a pod created after it.
			name := "watched-" + map[string]string{runtime.ContentTypeProtobuf: "pb", runtime.ContentTypeJSON: "json"}[content]
			list, err := c.Resource(kubeclient.Pods, ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := c.Resource(kubeclient.Pods, ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.(*corev1.PodList).ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			mustCreate(admin.CoreV1().Pods(ns).Create(ctx, pod(name, "n1"), metav1.CreateOptions{}))
			select {
			case ev := <-w.ResultChan():
				if p, ok := ev.Object.(*corev1.Pod); ev.Type != watch.Added || !ok || p.Name != name {
					t.Fatalf("watch: %s %#v, want %s added", ev.Type, ev.Object, name)
				}
			case <-ctx.Done():
				t.Fatal("watch: nothing seen")
			}
			if err := c.Resource(kubeclient.Pods, ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("%s after delete: %v", name, err)
			}

			// Events: created in their own namespace, updated, patched.
			ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + ".1"},
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "on-n1"},
				Reason:         "CPUsPinned", Message: "first", Type: corev1.EventTypeNormal, Count: 1}
			made, err := c.Events().Create(ev)
			if err != nil || made.ResourceVersion == "" {
				t.Fatalf("create event: %v, %#v", err, made)
			}
			made.Message = "updated"
			if _, err := c.Events().Update(made); err != nil {
				t.Fatalf("update event: %v", err)
			}
			if _, err := c.Events().Patch(made, []byte(`{"count":3}`)); err != nil {
				t.Fatalf("patch event: %v", err)
			}
			got, err := admin.CoreV1().Events(ns).Get(ctx, ev.Name, metav1.GetOptions{})
			if err != nil || got.Message != "updated" || got.Count != 3 {
				t.Fatalf("event as stored: %v, message %q count %d", err, got.Message, got.Count)
			}

			res, err := c.ServerResourcesForGroupVersion("v1")
			if err != nil {
				t.Fatal(err)
			}
			served := map[string]bool{}
			for _, r := range res.APIResources {
				served[r.Name] = true
			}
			if !served["pods"] || !served["configmaps"] || !served["events"] {
				t.Errorf("discovery of v1: %v", served)
			}
			if _, err := c.ServerResourcesForGroupVersion("nothere.example.com/v1"); !apierrors.IsNotFound(err) {
				t.Errorf("discovery of a group not served: %v, want not found", err)
			}
		})
	}

	// Deleting the DaemonSet last, as remove-agents does.
	c, err := kubeclient.New(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Resource(kubeclient.DaemonSets, ns).Delete(ctx, "agent", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Resource(kubeclient.DaemonSets, ns).Get(ctx, "agent"); !apierrors.IsNotFound(err) {
		t.Errorf("daemonset after delete: %v", err)
	}
}

// As passes an error through, gives the object as the type asked for, and
// names what came instead when it is another.
func TestAs(t *testing.T) {
	if _, err := kubeclient.As[*corev1.Pod](nil, apierrors.NewNotFound(corev1.Resource("pods"), "p")); !apierrors.IsNotFound(err) {
		t.Errorf("error not passed through: %v", err)
	}
	if p, err := kubeclient.As[*corev1.Pod](&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, nil); err != nil || p.Name != "p" {
		t.Errorf("pod: %v, %v", p, err)
	}
	if _, err := kubeclient.As[*corev1.PodList](&corev1.Pod{}, nil); err == nil || !strings.Contains(err.Error(), "*v1.Pod, not *v1.PodList") {
		t.Errorf("a pod for a list: %v", err)
	}
}
