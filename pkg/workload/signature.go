package workload

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/decisionsig"
)

// AnnotationDecisionSignature is the scheduler's signature of its decision
// on a pod (decisionsig), written with it in the same Binding or patch:
//
//	locus.io/resource-status-signature: v1:<key id>:<base64url HMAC-SHA256>
//
// It covers the pod's UID, the node's name, and the values of
// AnnotationResourceStatus and AnnotationContainerCPUSets as written. The
// agent applies a decision only under a signature that holds.
const AnnotationDecisionSignature = "locus.io/resource-status-signature"

// Trust is what the agent believes a decision by: the node it runs on and
// the scheduler's keys (nil when none is configured: then no decision is
// believed).
type Trust struct {
	Node string
	Keys *decisionsig.Keys
}

// SignDecision adds the signature of a decision to the annotations the
// scheduler writes on a pod bound to node: ann holds the decision's
// annotations (AnnotationResourceStatus and, for a container-scope pod,
// AnnotationContainerCPUSets).
func SignDecision(keys *decisionsig.Keys, uid, node string, ann map[string]string) error {
	sig, err := decisionsig.Sign(keys, decisionOf(uid, node, ann))
	if err != nil {
		return err
	}
	ann[AnnotationDecisionSignature] = sig
	return nil
}

// VerifyDecision says whether the pod's decision is the scheduler's, made
// for this pod on node; the error says why not, naming the annotation.
func VerifyDecision(keys *decisionsig.Keys, pod *corev1.Pod, node string) error {
	err := decisionsig.Verify(keys, decisionOf(string(pod.UID), node, pod.Annotations), pod.Annotations[AnnotationDecisionSignature])
	if err != nil {
		return fmt.Errorf("annotation %s: %v", AnnotationDecisionSignature, err)
	}
	return nil
}

func decisionOf(uid, node string, ann map[string]string) decisionsig.Claim {
	d := decisionsig.Claim{PodUID: uid, Node: node, ResourceStatus: ann[AnnotationResourceStatus]}
	if parts, ok := ann[AnnotationContainerCPUSets]; ok {
		d.ContainerCPUSets = &parts
	}
	return d
}
