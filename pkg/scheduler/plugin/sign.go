package plugin

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/locus-project/locus/pkg/decisionsig"
	"github.com/locus-project/locus/pkg/workload"
)

// signed are the decision's annotations for a pod bound to node, with the
// signature the node's agent requires (workload.SignDecision): nil before
// Reserve. Without a key the decision goes unsigned: the agent then
// chooses the pod's CPUs itself, and says so on the pod.
func (p *Plugin) signed(ctx context.Context, s *cycleState, pod *v1.Pod, node string) (map[string]string, error) {
	p.realign(ctx, s, pod, node)
	ann := s.annotations()
	if len(ann) == 0 {
		return ann, nil // nil before Reserve; empty: no decision to sign
	}
	keys := p.currentKeys(klog.FromContext(ctx))
	if keys == nil {
		return ann, nil
	}
	if err := workload.SignDecision(keys, string(pod.UID), node, ann); err != nil {
		return nil, err
	}
	return ann, nil
}

// currentKeys are the keys as last read, a new key file logged once; nil
// without any.
func (p *Plugin) currentKeys(logger klog.Logger) *decisionsig.Keys {
	if p.keys == nil {
		return nil
	}
	keys, changed, err := p.keys.Keys()
	switch {
	case changed && err != nil:
		logger.Error(err, "cannot read the decision keys; keeping those read before", "keys", keys.IDs())
	case changed:
		logger.Info("decision keys read", "file", p.keys.Path(), "keys", keys.IDs())
	}
	return keys
}

// believed says whether a bound pod's decision counts: with keys, only
// under their signature for the pod on its node (a tenant's own
// resource-status holds no CPUs in the plugin's books either); without,
// every decision counts, as nothing can be told apart.
func (p *Plugin) believed(logger klog.Logger, pod *v1.Pod) bool {
	keys := p.currentKeys(logger)
	if p.keys == nil {
		return true
	}
	if err := workload.VerifyDecision(keys, pod, pod.Spec.NodeName); err != nil {
		logger.V(2).Info("ignoring a decision not signed for the pod", "pod", klog.KObj(pod), "node", pod.Spec.NodeName, "err", err)
		return false
	}
	return true
}
