package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/status"
)

// renderParts lists, under the table, each libvirt VM and each workload
// whose parts hold CPUs of their own: a dedicated VM's vCPUs and emulator,
// a container-scope pod's containers. The table has one CPU list per
// workload; these say which thread or container runs where.
func renderParts(w io.Writer, ws []status.WorkloadStatus) {
	for _, s := range ws {
		if s.LibvirtDomain == "" && len(s.ContainerCPUs) == 0 {
			continue
		}
		var head []string
		if s.LibvirtDomain != "" {
			head = append(head, "libvirt domain "+s.LibvirtDomain)
		}
		var parts []string
		for _, name := range partOrder(s.ContainerCPUs) {
			parts = append(parts, name+" "+s.ContainerCPUs[name])
		}
		switch {
		case len(parts) > 0:
			head = append(head, strings.Join(parts, ", "))
		case s.LibvirtDomain != "":
			head = append(head, "every thread on "+orDash(s.CPUs))
		}
		fmt.Fprintf(w, "%s: %s\n", s.Name, strings.Join(head, ": "))
	}
}

// partOrder is the parts' names in the order a reader looks for them:
// vcpu0, vcpu1, ..., vcpu10 by number, then the others (emulator, a pod's
// containers) by name.
func partOrder(parts map[string]string) []string {
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
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

func vcpuNumber(name string) (int, bool) {
	num, ok := strings.CutPrefix(name, "vcpu")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil && n >= 0 && strconv.Itoa(n) == num
}
