package cgroup

import (
	"strings"
	"testing"
)

func TestPrivilegeDecision(t *testing.T) {
	for _, tc := range []struct {
		name     string
		euid     int
		caps     uint64
		writable bool
		ok       bool
	}{
		{"root", 0, 0, false, true},
		{"CAP_SYS_ADMIN", 1000, 1 << capSysAdmin, false, true},
		{"own fixture tree", 1000, 0, true, true},
		{"nobody", 65534, 0, false, false},
	} {
		err := privilegeError(tc.euid, tc.caps, tc.writable, "/sys/fs/cgroup/cpuset")
		if (err == nil) != tc.ok || (err != nil && !strings.Contains(err.Error(), "needs root (or CAP_SYS_ADMIN) to write cgroups")) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
