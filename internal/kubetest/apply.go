package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

// FieldManager is the server-side-apply field manager of the objects Apply writes.
const FieldManager = "locus-kubetest"

// NodeResourceTopologyCRD is the NodeResourceTopology CRD shipped with the Helm chart,
// relative to the repository root.
const NodeResourceTopologyCRD = "deploy/helm/locus/crds/noderesourcetopologies.topology.node.k8s.io.yaml"

// mapperState maps kinds to resources through discovery, cached until a kind is not
// found (a CRD installed since), then refreshed once.
type mapperState struct {
	once   sync.Once
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// crdResource is where CustomResourceDefinitions live.
var crdResource = schema.GroupVersionResource{
	Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions",
}

func (cp *ControlPlane) restMapper() *restmapper.DeferredDiscoveryRESTMapper {
	st := &cp.mapper
	st.once.Do(func() {
		st.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cp.Client.Discovery()))
	})
	return st.mapper
}

// DecodeYAML splits data (YAML documents separated by ---, JSON, or a v1 List) into
// objects. An empty document is skipped; one without apiVersion, kind or name is an
// error naming its position.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if len(m) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{Object: m}
		items := []*unstructured.Unstructured{obj}
		if obj.IsList() {
			items = nil
			err := obj.EachListItem(func(o runtime.Object) error {
				items = append(items, o.(*unstructured.Unstructured))
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", doc, err)
			}
		}
		for _, it := range items {
			switch {
			case it.GetAPIVersion() == "":
				return nil, fmt.Errorf("document %d: apiVersion is missing", doc)
			case it.GetKind() == "":
				return nil, fmt.Errorf("document %d: kind is missing", doc)
			case it.GetName() == "":
				return nil, fmt.Errorf("document %d (%s): metadata.name is missing or not a string", doc, it.GetKind())
			}
		}
		objs = append(objs, items...)
	}
}

// Apply server-side-applies every object in data, in order, and returns them as
// stored. A namespaced object without a namespace goes to "default".
func (cp *ControlPlane) Apply(ctx context.Context, data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := DecodeYAML(data)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, obj := range objs {
		stored, err := cp.applyOne(ctx, obj)
		if err != nil {
			return out, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		out = append(out, stored)
	}
	return out, nil
}

func (cp *ControlPlane) applyOne(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	mapper := cp.restMapper()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		mapper.Reset()
		mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, err
	}
	client := cp.Dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return client.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	}
	ns := obj.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault
		obj.SetNamespace(ns)
	}
	return client.Namespace(ns).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
}

// ApplyYAML is Apply for a test: an error fails it.
func (cp *ControlPlane) ApplyYAML(t testing.TB, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := cp.Apply(callContext(t), data)
	if err != nil {
		t.Fatalf("kubetest: apply: %v", err)
	}
	return objs
}

// ApplyFile applies the objects of a YAML file; a relative path is taken from the
// test's working directory (its package directory).
func (cp *ControlPlane) ApplyFile(t testing.TB, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	objs, err := cp.Apply(callContext(t), data)
	if err != nil {
		t.Fatalf("kubetest: apply %s: %v", path, err)
	}
	return objs
}

// InstallCRDs applies the CustomResourceDefinitions in the given files and waits
// until each is Established, so that objects of their kinds can be created at once.
func (cp *ControlPlane) InstallCRDs(t testing.TB, paths ...string) {
	t.Helper()
	for _, path := range paths {
		for _, obj := range cp.ApplyFile(t, path) {
			if obj.GetKind() != "CustomResourceDefinition" {
				t.Fatalf("kubetest: %s: %s %s is not a CustomResourceDefinition", path, obj.GetKind(), obj.GetName())
			}
			cp.waitEstablished(t, obj.GetName())
		}
	}
	cp.restMapper().Reset()
}

// InstallNodeResourceTopologyCRD installs the chart's NodeResourceTopology CRD
// (topology.node.k8s.io, versions v1alpha1 and v1alpha2).
func (cp *ControlPlane) InstallNodeResourceTopologyCRD(t testing.TB) {
	t.Helper()
	cp.InstallCRDs(t, RepoPath(t, NodeResourceTopologyCRD))
}

func (cp *ControlPlane) waitEstablished(t testing.TB, name string) {
	t.Helper()
	crds := cp.Dynamic.Resource(crdResource)
	WaitFor(t, "CRD "+name+" to be Established", 30*time.Second, func(ctx context.Context) (bool, error) {
		crd, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
}

// RepoPath returns rel (slash-separated, from the repository root) as a path.
func RepoPath(t testing.TB, rel string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	return filepath.Join(root, filepath.FromSlash(rel))
}
