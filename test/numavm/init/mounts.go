package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

type mountSpec struct {
	source, target, fstype, data string
}

// baseMounts are the filesystems every test may expect on a Linux host.
var baseMounts = []mountSpec{
	{"proc", "/proc", "proc", ""},
	{"sysfs", "/sys", "sysfs", ""},
	{"devtmpfs", "/dev", "devtmpfs", ""},
	{"tmpfs", "/tmp", "tmpfs", "mode=1777"},
	{"tmpfs", "/run", "tmpfs", "mode=755"},
}

func mountBase() error {
	for _, m := range baseMounts {
		if err := mount(m); err != nil {
			return err
		}
	}
	return nil
}

func mount(m mountSpec) error {
	if err := os.MkdirAll(m.target, 0o755); err != nil {
		return err
	}
	if err := unix.Mount(m.source, m.target, m.fstype, 0, m.data); err != nil {
		return fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
	}
	return nil
}

// mountCgroups mounts the layout named by LOCUS_NUMAVM_CGROUP:
//
//   - v2: cgroup2 at /sys/fs/cgroup with every controller enabled for the
//     root's children, as systemd leaves a unified host;
//   - v1: a tmpfs at /sys/fs/cgroup holding one v1 hierarchy per controller
//     group and cgroup2 (without controllers) at /sys/fs/cgroup/unified, the
//     layout of a systemd "hybrid" host.
func mountCgroups(mode string) error {
	const root = "/sys/fs/cgroup"
	if mode == "v2" {
		if err := mount(mountSpec{"cgroup2", root, "cgroup2", ""}); err != nil {
			return err
		}
		return enableControllers(root)
	}
	if err := mount(mountSpec{"tmpfs", root, "tmpfs", "mode=755"}); err != nil {
		return err
	}
	ctrls, err := v1Controllers("/proc/cgroups")
	if err != nil {
		return err
	}
	for _, m := range v1Mounts(root, ctrls) {
		if err := mount(m); err != nil {
			return err
		}
	}
	for alias, target := range v1Aliases(ctrls) {
		if err := os.Symlink(target, filepath.Join(root, alias)); err != nil {
			return err
		}
	}
	return mount(mountSpec{"cgroup2", filepath.Join(root, "unified"), "cgroup2", ""})
}

// enableControllers writes every available controller into the root's
// cgroup.subtree_control, so children can use cpuset, memory, cpu, io, pids.
func enableControllers(root string) error {
	b, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	if err != nil {
		return err
	}
	var on []string
	for _, c := range strings.Fields(string(b)) {
		on = append(on, "+"+c)
	}
	if len(on) == 0 {
		return nil
	}
	path := filepath.Join(root, "cgroup.subtree_control")
	if err := os.WriteFile(path, []byte(strings.Join(on, " ")), 0o644); err != nil {
		return fmt.Errorf("write %q to %s: %w", strings.Join(on, " "), path, err)
	}
	return nil
}

// v1Controllers lists the enabled controllers in /proc/cgroups.
func v1Controllers(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 4 && !strings.HasPrefix(fields[0], "#") && fields[3] == "1" {
			out = append(out, fields[0])
		}
	}
	return out, sc.Err()
}

// v1Pairs are the controllers systemd co-mounts in one hierarchy.
var v1Pairs = map[string]string{"cpu": "cpuacct", "net_cls": "net_prio"}

// v1Mounts returns one mount per controller, co-mounting the pairs systemd
// does (cpu,cpuacct and net_cls,net_prio) when both are present.
func v1Mounts(root string, ctrls []string) []mountSpec {
	have := map[string]bool{}
	for _, c := range ctrls {
		have[c] = true
	}
	paired := map[string]bool{}
	for a, b := range v1Pairs {
		if have[a] && have[b] {
			paired[b] = true
		}
	}
	var out []mountSpec
	for _, c := range ctrls {
		if paired[c] {
			continue
		}
		name := c
		if b, ok := v1Pairs[c]; ok && have[b] {
			name = c + "," + b
		}
		out = append(out, mountSpec{"cgroup", filepath.Join(root, name), "cgroup", name})
	}
	return out
}

// v1Aliases maps each co-mounted controller's own name to its shared
// directory (cpu -> cpu,cpuacct), as systemd links them.
func v1Aliases(ctrls []string) map[string]string {
	have := map[string]bool{}
	for _, c := range ctrls {
		have[c] = true
	}
	out := map[string]string{}
	for a, b := range v1Pairs {
		if have[a] && have[b] {
			out[a], out[b] = a+","+b, a+","+b
		}
	}
	return out
}
