// Package kubelet reads, and never writes, what the kubelet keeps on the
// node about CPUs and memory: the CPU manager checkpoint (cpu_manager_state),
// the memory manager checkpoint (memory_manager_state) and the kubelet's
// configuration file. Locus runs beside the kubelet's static CPU manager by
// taking the CPUs it gave exclusively as the kubelet's own.
//
// Everything read is hostile until bounded: files are read up to a size,
// CPU lists go through topology.ParseCPUList, and every map and list is
// counted before it is kept. A checkpoint is believed only when its
// checksum is the one the kubelet would compute (checksum.go).
//
// Read(Paths{Dir: DefaultDir}) reads everything and never fails; its
// Summary is the policies, the default and exclusive CPUs, the reserved CPUs
// and the files that could not be read, ready for a report.
package kubelet
