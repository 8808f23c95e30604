package view

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// VM is a workload that is a libvirt domain: its name and where each of its
// threads' cgroups runs.
type VM struct {
	Domain string `json:"domain"`
	// Threads are its thread cgroups with CPUs of their own (a dedicated
	// policy's vcpu0, vcpu1, ..., emulator), vCPUs first by number; none
	// when every thread shares the workload's CPUs.
	Threads []VMThread `json:"threads,omitempty"`
}

// VMThread is one thread cgroup of a domain and its CPUs, in Linux list
// format.
type VMThread struct {
	Name string `json:"name"`
	CPUs string `json:"cpus"`
}

// NewVM is the domain with its thread cgroups' CPUs (by cgroup name, as
// the agent's status has them), the threads in ThreadOrder.
func NewVM(domain string, threads map[string]string) *VM {
	vm := &VM{Domain: domain}
	names := make([]string, 0, len(threads))
	for n := range threads {
		names = append(names, n)
	}
	for _, n := range ThreadOrder(names) {
		vm.Threads = append(vm.Threads, VMThread{Name: n, CPUs: threads[n]})
	}
	return vm
}

// ThreadOrder sorts part names as a reader looks for them: vcpu0, vcpu1,
// ..., vcpu10 by number, then the others (emulator, a pod's containers) by
// name. It sorts names in place and returns it.
func ThreadOrder(names []string) []string {
	slices.SortFunc(names, func(a, b string) int {
		va, aok := vcpuNumber(a)
		vb, bok := vcpuNumber(b)
		switch {
		case aok && bok:
			return va - vb
		case aok:
			return -1
		case bok:
			return 1
		}
		return strings.Compare(a, b)
	})
	return names
}

// vcpuNumber is N of "vcpuN", written as strconv writes N (no sign, no
// leading zero).
func vcpuNumber(name string) (int, bool) {
	num, ok := strings.CutPrefix(name, "vcpu")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == num
}

// threadsText is "vcpu0 2 · vcpu1 3 · emulator 0-1", or "every thread on
// CPUS" when the threads share the workload's CPUs.
func (w Workload) threadsText() string {
	if len(w.VM.Threads) == 0 {
		return "every thread on " + orDash(w.CPUs)
	}
	parts := make([]string, len(w.VM.Threads))
	for i, th := range w.VM.Threads {
		parts[i] = th.Name + " " + orDash(th.CPUs)
	}
	return strings.Join(parts, " · ")
}

// vmText is "VM web-front · node 0 · vcpu0 2 · vcpu1 3 · emulator 0-1",
// with "memory on NODES" where cpuset.mems differs from the CPUs' nodes.
func (w Workload) vmText() string {
	parts := []string{"VM " + w.VM.Domain}
	switch len(w.NUMANodes) {
	case 0:
	case 1:
		parts = append(parts, "node "+ints(w.NUMANodes))
	default:
		parts = append(parts, "nodes "+ints(w.NUMANodes))
	}
	if len(w.MemNodes) > 0 && !slices.Equal(w.MemNodes, w.NUMANodes) {
		parts = append(parts, "memory on "+ints(w.MemNodes))
	}
	return strings.Join(append(parts, w.threadsText()), " · ")
}

// vmLines are the VMs among the table's rows, a line each under a title,
// in the rows' order: `locus top`'s table has one CPU list per workload,
// these say which vCPU runs where.
func vmLines(rows []Workload, width int) []Line {
	names := 0
	for _, w := range rows {
		if w.VM != nil {
			names = max(names, utf8.RuneCountInString(w.Name))
		}
	}
	var out []Line
	for _, w := range rows {
		if w.VM == nil {
			continue
		}
		if out == nil {
			out = append(out, Line{styled("  VMs", RoleHeader)})
		}
		out = append(out, Line{text("  " + pad(w.Name, names, false) + "  "), text(w.vmText())}.clip(width))
	}
	return out
}

// vmThreadOn names the vCPU on each CPU a domain's vCPU holds of its own
// ("vcpu0 of web-front"), for the map's CPU tips. The emulator is left
// out: where it has no CPUs of its own it runs in the shared pool, whose
// CPUs are not the VM's.
func vmThreadOn(ws []Workload) map[int]string {
	out := map[int]string{}
	for _, w := range ws {
		if w.VM == nil {
			continue
		}
		for _, th := range w.VM.Threads {
			if _, vcpu := vcpuNumber(th.Name); !vcpu {
				continue
			}
			for _, id := range parseList(th.CPUs).List() {
				if _, taken := out[id]; !taken {
					out[id] = th.Name + " of " + w.VM.Domain
				}
			}
		}
	}
	return out
}
