// Package integration tests locus-scheduler end to end on a real
// kube-apiserver (internal/kubetest): the scheduler runs in-process with the
// Helm chart's configuration and RBAC, kwok plays the nodes' kubelets, and
// the Locus node agent runs for each node in --node-name mode on a fixture
// sysfs and a fake cgroup tree, reporting the CPUs it applies in the
// node's NodeResourceTopology. It has tests only.
package integration
