package hostconfig

import (
	"strings"
	"testing"
)

// cpuPolicy is shared (the default) or dedicated, and dedicated only for a
// libvirt domain; anything else is refused naming the field and the value.
func TestCPUPolicy(t *testing.T) {
	head := "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n"
	for _, tc := range []struct{ workload, want string }{
		{`{name: vm, match: {libvirtDomain: vm1}}`, ""},
		{`{name: vm, match: {libvirtDomain: vm1}, cpuPolicy: shared}`, ""},
		{`{name: vm, match: {libvirtDomain: vm1}, cpuPolicy: dedicated}`, ""},
		{`{name: db, cgroup: db.slice, cpuPolicy: shared}`, ""},
		{`{name: vm, match: {libvirtDomain: vm1}, cpuPolicy: Dedicated}`, `workloads[0].cpuPolicy: "Dedicated": want shared (the default) or dedicated`},
		{`{name: vm, match: {libvirtDomain: vm1}, cpuPolicy: isolate}`, `workloads[0].cpuPolicy: "isolate": want shared`},
		{`{name: vm, match: {libvirtDomain: vm1}, cpuPolicy: "` + strings.Repeat("x", 300) + `"}`, `cpuPolicy: "` + strings.Repeat("x", 64) + `…"`},
		{`{name: db, cgroup: db.slice, cpuPolicy: dedicated}`, `workloads[0].cpuPolicy: "dedicated" needs match.libvirtDomain`},
		{`{name: db, match: {comm: qemu-kvm, uid: 107}, cpuPolicy: dedicated}`, `workloads[0].cpuPolicy: "dedicated" needs match.libvirtDomain`},
	} {
		c, err := Parse([]byte(head + "- " + tc.workload + "\n"))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.workload, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%.80s: %v, want %q", tc.workload, err, tc.want)
		case err == nil && c.Workloads[0].Dedicated() != strings.Contains(tc.workload, "dedicated"):
			t.Errorf("%s: Dedicated() %v", tc.workload, c.Workloads[0].Dedicated())
		}
	}
}
