// Package scale measures locus-scheduler at cluster scale against
// kube-scheduler of the same version, on a real kube-apiserver with kwok
// nodes (internal/kubetest): the same pods, the same nodes and the same
// client limits through each scheduler in turn, in the same run. It has
// tests only: a small run on every `go test`, the measured sizes with
// LOCUS_SCHED_SCALE=1 (bench/scheduler/run.sh).
package scale
