// Package guest holds the NUMA balancer's tests and benchmarks that need a
// real multi-node kernel: they run in the NUMA test guest (test/numavm) and
// skip elsewhere. The package itself is empty.
package guest
