package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/view"
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

// partOrder is the parts' names in view.ThreadOrder: vCPUs by number, then
// the others by name.
func partOrder(parts map[string]string) []string {
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
	return view.ThreadOrder(names)
}
