// Package e2e holds the end-to-end tests of Locus on a real one-node Kubernetes
// cluster of this machine: etcd, kube-apiserver, kube-controller-manager, the
// kubelet, containerd and runc, locus-scheduler and the Locus agent, brought up by
// hack/e2e-up.sh. The tests apply the seeds' manifests (their images swapped for
// the project's workload image, since no registry is reachable) and check what
// really happened: the cgroup files the kubelet and runc made, /proc/PID/status of
// the containers' processes, and the Events.
//
// They run only with LOCUS_E2E=1, against the node hack/e2e-up.sh brought up
// (`make e2e` does both and takes the node down after); a plain `go test ./...`
// reports them skipped, naming that target. See docs/e2e.md.
package e2e
