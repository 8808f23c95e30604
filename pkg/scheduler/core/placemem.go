package core

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/kube/nrt"
)

// countsMemory says whether placing req on v counts memory: the pod asks
// for some and the node's report says what its NUMA nodes have.
func (v *NodeView) countsMemory(req Request) bool {
	return req.Memory != (cpualloc.Memory{}) && v.free != nil
}

// allocateMemory places the CPUs and the memory together: the allocator
// keeps both on the nodes that hold them (the CPUs' nodes, or a larger
// nearest group when those cannot: Result.MemNodes).
func (v *NodeView) allocateMemory(req Request, near []int, rank bool) (cpualloc.Result, error) {
	// Cheap refusal, before the allocator: all of the node's NUMA nodes
	// together cannot hold one kind.
	if kind, asked, free := shortOf(v.free, req.Memory); kind != "" {
		return cpualloc.Result{}, &Unfit{Kind: Insufficient, Short: kind,
			Detail: fmt.Sprintf("%s: %s asked, %s free on all NUMA nodes together", kind, bytesText(asked), bytesText(free))}
	}
	r := req.alloc()
	r.Near = near
	if rank {
		return v.machine.alloc.RankBitsFree(v.bits, v.burst, v.free, v.Reserved, r)
	}
	return v.machine.alloc.AllocateBitsFree(v.bits, v.burst, v.free, v.Reserved, r)
}

// shortOf is what a node that refused req lacks, for the reason: ""
// (CPUs) when the CPUs alone do not fit or the pod asks no memory, else
// the first kind of memory that alone does not fit beside the CPUs, else
// all of them together. Only refusals pay for it, once per view.
func (v *NodeView) shortOf(req Request) string {
	if !v.countsMemory(req) {
		return ""
	}
	cpus := req.alloc()
	cpus.Memory = cpualloc.Memory{}
	if _, err := v.machine.alloc.AllocateBits(v.bits, v.burst, v.Reserved, cpus); err != nil {
		return ""
	}
	m := req.Memory
	for _, k := range []struct {
		name string
		only cpualloc.Memory
	}{
		{"memory", cpualloc.Memory{Bytes: m.Bytes}},
		{nrt.ResourceHugePages2Mi, cpualloc.Memory{HugePages2Mi: m.HugePages2Mi}},
		{nrt.ResourceHugePages1Gi, cpualloc.Memory{HugePages1Gi: m.HugePages1Gi}},
	} {
		if k.only == (cpualloc.Memory{}) {
			continue
		}
		one := req.alloc()
		one.Memory = k.only
		if _, err := v.machine.alloc.AllocateBitsFree(v.bits, v.burst, v.free, v.Reserved, one); errors.Is(err, cpualloc.ErrInsufficient) {
			return k.name
		}
	}
	return "memory and huge pages together"
}

// memoryReason is the node-independent reason of a node short of memory.
func memoryReason(short string, req Request) string {
	return fmt.Sprintf("node(s) had not enough free %s on the NUMA nodes that could also hold the pod's %d CPUs (%s)", short, req.CPUs, describe(req.Memory))
}

// describe is what a pod asks of memory, as its resources say it.
func describe(m cpualloc.Memory) string {
	s := ""
	for _, k := range []struct {
		name  string
		bytes uint64
	}{{"memory", m.Bytes}, {nrt.ResourceHugePages2Mi, m.HugePages2Mi}, {nrt.ResourceHugePages1Gi, m.HugePages1Gi}} {
		if k.bytes == 0 {
			continue
		}
		if s != "" {
			s += ", "
		}
		s += k.name + " " + bytesText(k.bytes)
	}
	return s
}

// bytesText writes bytes as Kubernetes does (48Gi). Every count here is
// bounded far below 2^63 (maxZoneBytes, and a request's own bound).
func bytesText(n uint64) string {
	return resource.NewQuantity(int64(min(n, 1<<62)), resource.BinarySI).String()
}
