package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/balancerloop"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/execute"
	"github.com/locus-project/locus/pkg/kube/kubeclient"
	"github.com/locus-project/locus/pkg/kube/nrt"
	"github.com/locus-project/locus/pkg/status"
)

// The agent cannot tell an uninstall from an upgrade or a restart by the SIGTERM
// alone: all three stop its pod. The DaemonSet that runs it can: it is gone, or
// being deleted, only when Locus is being removed from the cluster. Then, and
// only then, the agent puts the node back as it found it. On any doubt (the API
// server does not answer) it keeps everything, as on a restart.

// ownerBeingRemoved reports whether the DaemonSet namespace/name is gone or
// being deleted.
func ownerBeingRemoved(ctx context.Context, client kubeclient.Interface, owner string) (bool, error) {
	ns, name, err := splitOwner(owner)
	if err != nil {
		return false, err
	}
	ds, err := kubeclient.As[*appsv1.DaemonSet](client.Resource(kubeclient.DaemonSets, ns).Get(ctx, name))
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return ds.DeletionTimestamp != nil, nil
}

func splitOwner(owner string) (string, string, error) {
	ns, name, ok := strings.Cut(owner, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("--owner-daemonset %q is not NAMESPACE/NAME", owner)
	}
	return ns, name, nil
}

// uninstallNode undoes what the agent did on this node once its DaemonSet is
// being removed: every cgroup file back to its original value, the node's
// NodeResourceTopology deleted, and the state files but the event log removed
// (a later install starts afresh). It runs after the agent stopped, with a
// deadline of its own: the pod's grace period is still running.
func (k *kubeFlags) uninstallNode(o agent.Options, cfg *rest.Config, log io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	client, err := kubeclient.New(cfg)
	if err != nil {
		return err
	}
	removing, err := ownerBeingRemoved(ctx, client, k.ownerDaemonSet)
	if err != nil {
		return fmt.Errorf("cannot tell whether %s is being removed, so the node keeps Locus's settings: %w", k.ownerDaemonSet, err)
	}
	if !removing {
		return nil
	}
	fmt.Fprintf(log, "locus: DaemonSet %s is being removed: restoring this node\n", k.ownerDaemonSet)
	restored, gone, err := restoreOriginals(o.StateDir, o.CgroupRoot, o.CgroupVersion)
	if err != nil {
		return fmt.Errorf("restore the cgroup files' originals: %w", err)
	}
	fmt.Fprintf(log, "locus: restored %d cgroup files (%d of removed cgroups skipped)\n", restored, gone)
	if !k.noNRT {
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		err = dyn.Resource(nrt.GVR).Delete(ctx, k.node, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete NodeResourceTopology %s: %w", k.node, err)
		}
	}
	for _, f := range []string{"checkpoint.json", agent.OriginalsFile, agent.CreatedFile, agent.LocalityFile, balancerloop.File, status.File} {
		if err := os.Remove(filepath.Join(o.StateDir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// restoreOriginals writes back every original recorded in the state
// directory's originals file, through the executor of a process beside the
// agent (execute.Cgroups.RestoreOriginals: ancestors first, the originals
// of removed cgroups forgotten and counted as gone).
func restoreOriginals(stateDir, root string, v cgroup.Version) (restored, gone int, err error) {
	h, err := cgroup.Open(root, v)
	if err != nil {
		return 0, 0, err
	}
	store, err := cgroup.OpenFileStore(filepath.Join(stateDir, agent.OriginalsFile))
	if err != nil {
		return 0, 0, err
	}
	c, err := execute.NewCgroups(h, store)
	if err != nil {
		return 0, 0, err
	}
	return c.RestoreOriginals(store)
}
