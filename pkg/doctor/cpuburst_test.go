package doctor

import (
	"strings"
	"testing"
)

func TestCPUBurstCheck(t *testing.T) {
	for _, c := range []struct {
		name  string
		host  tree
		want  Status
		words string
	}{
		{"v1 with", hostV1().with("cgroup/cpu/cpu.cfs_burst_us", "0\n"), OK, "cpu.cfs_burst_us: present"},
		{"v1 without", hostV1(), Warn, "Linux 5.14"},
		{"v2 with", hostV2().with("cgroup/kubepods.slice/cpu.max", "max 100000\n", "cgroup/kubepods.slice/cpu.max.burst", "0\n"), OK, "cpu.max.burst: present"},
		{"v2 without", hostV2().with("cgroup/kubepods.slice/cpu.max", "max 100000\n"), Warn, "cpu.max.burst: absent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runCheck(t, c.host, "cpu-burst")
			if r.Status != c.want || !strings.Contains(r.Found+" "+r.Do, c.words) {
				t.Fatalf("got %s: %s (do: %s), want %s with %q", r.Status, r.Found, r.Do, c.want, c.words)
			}
		})
	}
}
