// Package kubetest runs a real Kubernetes control plane for tests: etcd and
// kube-apiserver (v1.33) on loopback ports, with throw-away certificates, RBAC on and
// no scheduler, controller-manager or kubelet. Tests create nodes and bind pods
// themselves, or run kwok to play the kubelet of fake nodes.
//
// The binaries come from hack/build-controlplane.sh ($LOCUS_CONTROLPLANE_BIN, default
// <repo>/.cache/controlplane/bin); without them a test fails and says so.
//
// One control plane per package, shared by its tests:
//
//	var cp *kubetest.ControlPlane
//
//	func TestMain(m *testing.M) { kubetest.Main(m, &cp) }
//
//	func TestX(t *testing.T) {
//		ns := cp.CreateNamespace(t, "x")
//		node := cp.CreateNode(t, "n1", corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")})
//		pod := cp.CreatePod(t, &corev1.Pod{...})
//		cp.BindPod(t, pod, node.Name)
//	}
//
// or one per test with Start(t). docs/kubernetes.md describes the whole API.
package kubetest
