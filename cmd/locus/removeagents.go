package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/kube/kubeclient"
)

// newRemoveAgentsCmd is the chart's pre-delete hook: it deletes the agents'
// DaemonSet while the release's RBAC still exists, so that each agent, stopped,
// finds its DaemonSet gone and may still restore its node and delete its
// NodeResourceTopology (uninstall.go); then it waits for the agents to finish.
// Helm deletes the rest of the release only after this hook succeeds.
func newRemoveAgentsCmd() *cobra.Command {
	var kube kubeFlags
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "remove-agents --owner-daemonset NAMESPACE/NAME",
		Short: "Delete the agents' DaemonSet and wait until every agent has put its node back (helm uninstall)",
		Args:  rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ns, name, err := splitOwner(kube.ownerDaemonSet)
			if err != nil {
				return usageError{err}
			}
			cfg, err := kube.restConfig()
			if err != nil {
				return err
			}
			client, err := kubeclient.New(cfg)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return removeAgents(ctx, client, ns, name, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&kube.ownerDaemonSet, "owner-daemonset", "", "NAMESPACE/NAME of the agents' DaemonSet")
	cmd.Flags().StringVar(&kube.kubeconfig, "kubeconfig", "", "kubeconfig file (default: the in-cluster service account)")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "give up after this long")
	return cmd
}

func removeAgents(ctx context.Context, client kubeclient.Interface, ns, name string, out interface{ Write([]byte) (int, error) }) error {
	daemonSets := client.Resource(kubeclient.DaemonSets, ns)
	ds, err := kubeclient.As[*appsv1.DaemonSet](daemonSets.Get(ctx, name))
	if apierrors.IsNotFound(err) {
		fmt.Fprintf(out, "DaemonSet %s/%s is gone already\n", ns, name)
		return nil
	}
	if err != nil {
		return err
	}
	sel := metav1.FormatLabelSelector(ds.Spec.Selector)
	background := metav1.DeletePropagationBackground
	if err := daemonSets.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	for {
		pods, err := kubeclient.As[*corev1.PodList](client.Resource(kubeclient.Pods, ns).List(ctx, metav1.ListOptions{LabelSelector: sel}))
		if err == nil && len(pods.Items) == 0 {
			fmt.Fprintf(out, "DaemonSet %s/%s deleted; every agent has stopped\n", ns, name)
			return nil
		}
		select {
		case <-ctx.Done():
			n := -1
			if pods != nil {
				n = len(pods.Items)
			}
			return fmt.Errorf("%d agent pods of %s/%s still there: %w (last error: %v)", n, ns, name, ctx.Err(), err)
		case <-time.After(time.Second):
		}
	}
}
