package plugin

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/workload"
)

// Bind binds an opted-in pod in one call, its decision an annotation of
// the Binding (the apiserver copies it onto the pod); other pods are left
// to the next binder.
func TestBindCarriesDecision(t *testing.T) {
	a := pod("a", nil)
	e := newEnv(t, nil, []*nrt.Object{report(t, "n1", nil)}, a)
	cs, _ := e.cycle(a, node("n1", "16"))
	if s := e.pl.Reserve(e.ctx, cs, a, "n1"); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := e.pl.Bind(e.ctx, cs, a, "n1"); !s.IsSuccess() {
		t.Fatal(s)
	}
	var bindings []*v1.Binding
	for _, act := range e.client.Actions() {
		if c, ok := act.(k8stesting.CreateAction); ok && act.GetSubresource() == "binding" {
			bindings = append(bindings, c.GetObject().(*v1.Binding))
		}
		if act.GetVerb() == "patch" {
			t.Errorf("Bind patched the pod: %v", act)
		}
	}
	if len(bindings) != 1 {
		t.Fatalf("%d bindings, want 1", len(bindings))
	}
	b := bindings[0]
	rs, err := workload.ParseResourceStatus(b.Annotations[workload.AnnotationResourceStatus])
	if err != nil || rs.CPUs.Size() != 4 || b.Target.Name != "n1" || b.Name != "a" || b.UID != a.UID {
		t.Fatalf("binding %+v: decision %+v, %v", b, rs, err)
	}

	other := pod("other", nil)
	delete(other.Annotations, workload.AnnotationCPUSet)
	if s := e.pl.Bind(e.ctx, framework.NewCycleState(), other, "n1"); !s.IsSkip() {
		t.Fatalf("Bind of a pod not opted in: %v, want Skip", s)
	}
}

// The plugin binds first (and PreBind writes nothing) exactly where the
// configuration enables it at bind too, as the default configuration
// does; enabled in multiPoint only, DefaultBinder binds first and PreBind
// writes the decision.
func TestBindsFirstFollowsConfiguration(t *testing.T) {
	multiPointOnly := filepath.Join(t.TempDir(), "config.yaml")
	err := os.WriteFile(multiPointOnly, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: locus-scheduler
  plugins:
    multiPoint:
      enabled:
      - {name: `+Name+`, weight: 5}
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		first      bool
	}{
		{"default", defaultConfigFile(t), true},
		{"multiPoint only", multiPointOnly, false},
	} {
		pl := frameworkWith(t, tc.path)
		if got := pl.bindsFirst(); got != tc.first {
			t.Errorf("%s: bindsFirst %v, want %v", tc.name, got, tc.first)
		}
	}
}

func defaultConfigFile(t *testing.T) string {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	for _, f := range options.NewOptions().Flags.FlagSets {
		fs.AddFlagSet(f)
	}
	raw, err := DefaultConfig(fs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// frameworkWith builds the framework of the configuration's profile with
// kube-scheduler's plugins and this one, on fake clients, and returns this
// plugin's instance.
func frameworkWith(t *testing.T, path string) *Plugin {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg, err := options.LoadConfigFromFile(klog.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	metrics.Register() // the framework counts its plugins in them
	client := fake.NewClientset()
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(kruntime.NewScheme(),
		map[schema.GroupVersionResource]string{nrt.GVR: nrt.Kind + "List"})
	var pl *Plugin
	reg := plugins.NewInTreeRegistry()
	err = reg.Register(Name, func(ctx context.Context, obj kruntime.Object, h framework.Handle) (framework.Plugin, error) {
		p, err := NewWithClient(ctx, obj, h, dynamicReports{dyn})
		pl = p
		return p, err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = frameworkruntime.NewFramework(ctx, reg, &cfg.Profiles[0], frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(informers.NewSharedInformerFactory(client, 0)),
		frameworkruntime.WithSnapshotSharedLister(internalcache.NewEmptySnapshot()))
	if err != nil {
		t.Fatal(err)
	}
	if pl == nil {
		t.Fatalf("%s: the profile has no %s", path, Name)
	}
	return pl
}

// A container-scope pod's binding carries the partition of its CPUs beside
// the decision: a sidecar's part and the app container's, disjoint, making
// up the decided CPUs. A pod-scope pod's carries none.
func TestBindCarriesPartition(t *testing.T) {
	a := pod("a", map[string]string{workload.AnnotationCPUScope: "container"})
	always := v1.ContainerRestartPolicyAlways
	a.Spec.Containers[0].Resources.Limits[v1.ResourceCPU] = resource.MustParse("3")
	a.Spec.InitContainers = []v1.Container{{Name: "log", RestartPolicy: &always,
		Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}
	b := pod("b", nil)
	e := newEnv(t, nil, []*nrt.Object{report(t, "n1", nil)}, a, b)
	for _, p := range []*v1.Pod{a, b} {
		cs, _ := e.cycle(p, node("n1", "16"))
		if s := e.pl.Reserve(e.ctx, cs, p, "n1"); !s.IsSuccess() {
			t.Fatal(s)
		}
		if s := e.pl.Bind(e.ctx, cs, p, "n1"); !s.IsSuccess() {
			t.Fatal(s)
		}
	}
	bindings := map[string]*v1.Binding{}
	for _, act := range e.client.Actions() {
		if c, ok := act.(k8stesting.CreateAction); ok && act.GetSubresource() == "binding" {
			bd := c.GetObject().(*v1.Binding)
			bindings[bd.Name] = bd
		}
	}
	rs, err := workload.ParseResourceStatus(bindings["a"].Annotations[workload.AnnotationResourceStatus])
	if err != nil || rs.CPUs.Size() != 4 {
		t.Fatalf("decision %+v, %v; want 4 CPUs (the sidecar's 1 and the app's 3)", rs, err)
	}
	parts, err := workload.ParseContainerCPUSets(bindings["a"].Annotations[workload.AnnotationContainerCPUSets], workload.PodPartsBudget(a, rs.CPUs))
	if err != nil || len(parts) != 2 || parts["log"].Size() != 1 || parts["go-demo"].Size() != 3 ||
		!parts["log"].Intersection(parts["go-demo"]).IsEmpty() || !parts["log"].Union(parts["go-demo"]).Equals(rs.CPUs) {
		t.Fatalf("partition %v, %v of %s", parts, err, rs.CPUs)
	}
	if raw, ok := bindings["b"].Annotations[workload.AnnotationContainerCPUSets]; ok {
		t.Errorf("a pod-scope pod's binding carries a partition: %s", raw)
	}
}
