// Package draapi says whether this cluster's Dynamic Resource Allocation
// objects can be read: the agent and the scheduler ask it before starting
// informers on them, since an informer on a resource the API server does not
// serve, or the caller may not list, holds the caller's start for ever.
package draapi

import (
	"context"
	"fmt"

	resourceapi "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/kube/kubeclient"
)

// Served is whether the API server serves the ResourceSlices and
// ResourceClaims of resource.k8s.io/v1beta1.
func Served(ctx context.Context, client kubeclient.Interface) bool {
	if ctx.Err() != nil {
		return false
	}
	list, err := client.ServerResourcesForGroupVersion(resourceapi.SchemeGroupVersion.String())
	if err != nil || list == nil {
		return false
	}
	var slices, claims bool
	for _, r := range list.APIResources {
		slices = slices || r.Name == "resourceslices"
		claims = claims || r.Name == "resourceclaims"
	}
	return slices && claims
}

// Listable lists one slice and one claim, to learn whether the caller may.
func Listable(ctx context.Context, client kubeclient.Interface) error {
	one := metav1.ListOptions{Limit: 1}
	if _, err := client.Resource(kubeclient.ResourceSlices, "").List(ctx, one); err != nil {
		return fmt.Errorf("cannot list ResourceSlices: %w", err)
	}
	if _, err := client.Resource(kubeclient.ResourceClaims, metav1.NamespaceAll).List(ctx, one); err != nil {
		return fmt.Errorf("cannot list ResourceClaims: %w", err)
	}
	return nil
}
