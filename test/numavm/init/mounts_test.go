package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestV1Mounts(t *testing.T) {
	tests := []struct {
		name        string
		ctrls       []string
		wantDirs    []string
		wantAliases map[string]string
	}{
		{
			name:     "systemd pairs co-mounted",
			ctrls:    []string{"cpuset", "cpu", "cpuacct", "memory", "net_cls", "net_prio", "pids"},
			wantDirs: []string{"cpuset", "cpu,cpuacct", "memory", "net_cls,net_prio", "pids"},
			wantAliases: map[string]string{"cpu": "cpu,cpuacct", "cpuacct": "cpu,cpuacct",
				"net_cls": "net_cls,net_prio", "net_prio": "net_cls,net_prio"},
		},
		{
			name:        "a pair with one half missing mounts alone",
			ctrls:       []string{"cpu", "memory"},
			wantDirs:    []string{"cpu", "memory"},
			wantAliases: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dirs []string
			for _, m := range v1Mounts("/sys/fs/cgroup", tt.ctrls) {
				name := filepath.Base(m.target)
				if m.fstype != "cgroup" || m.data != name || filepath.Dir(m.target) != "/sys/fs/cgroup" {
					t.Errorf("mount %+v: want a cgroup mount at /sys/fs/cgroup/<controllers> with them as data", m)
				}
				dirs = append(dirs, name)
			}
			if !slices.Equal(dirs, tt.wantDirs) {
				t.Errorf("dirs = %v, want %v", dirs, tt.wantDirs)
			}
			if got := v1Aliases(tt.ctrls); !maps.Equal(got, tt.wantAliases) {
				t.Errorf("aliases = %v, want %v", got, tt.wantAliases)
			}
		})
	}
}

func TestV1Controllers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cgroups")
	text := "#subsys_name\thierarchy\tnum_cgroups\tenabled\n" +
		"cpuset\t0\t1\t1\nmemory\t0\t1\t1\nrdma\t0\t1\t0\nbroken line\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := v1Controllers(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cpuset", "memory"}; !slices.Equal(got, want) {
		t.Errorf("v1Controllers = %v, want %v (disabled rdma left out)", got, want)
	}
	if _, err := v1Controllers(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("a missing /proc/cgroups gave no error")
	}
}
