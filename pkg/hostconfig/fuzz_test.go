package hostconfig

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/locus-project/locus/internal/fuzzseed"
	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/topology"
)

// FuzzParse: a HostConfig is written by an operator, but often by a tool or
// by hand: whatever it says, Parse answers in bounded time with an error
// naming a field, or a config whose every field is valid and which writes
// back (as YAML) to the same config.
func FuzzParse(f *testing.F) {
	f.Add(good)
	fuzzseed.Add(f, func(s string) string {
		return "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPUs: " + yamlString(s) + "\nworkloads: []\n"
	})
	fuzzseed.Add(f, func(s string) string {
		return "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- name: a\n  cgroup: " + yamlString(s) +
			"\n  resources: {limits: {memory: " + yamlString(s) + "}}\n"
	})
	fuzzseed.Add(f, func(s string) string {
		return "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads: " + s + "\n"
	})
	fuzzseed.Add(f, func(s string) string {
		return "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- name: vm\n  match: {libvirtDomain: " + yamlString(s) + "}\n"
	})
	fuzzseed.Add(f, func(s string) string {
		return "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- name: a\n  cgroup: x\n  resources: {requests: {hugepages-2Mi: " +
			yamlString(s) + "}, limits: {hugepages-1Gi: " + yamlString(s) + "}}\n"
	})
	fuzzseed.Add(f, func(s string) string {
		return "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nmoves: {enabled: " + s + ", rebalance: " + s + "}\nworkloads:\n- name: a\n  cgroup: x\n  movable: " + s + "\n"
	})
	fuzzseed.Add(f, func(s string) string {
		return "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- name: a\n  cgroup: x\n  devices: [" + yamlString(s) + "]\n"
	})
	fuzzseed.Add(f, func(s string) string {
		return "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- name: a\n  cgroup: x\n  devices: " + s + "\n"
	})
	fuzzseed.Add(f, func(s string) string {
		return "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- name: vm\n  match: {libvirtDomain: vm1}\n  cpuPolicy: " + yamlString(s) + "\n"
	})
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var cfg *HostConfig
		var err error
		fuzzseed.Timed(t, "Parse", func() { cfg, err = Parse([]byte(raw)) })
		fuzzseed.CheckError(t, err)
		if err != nil {
			return
		}
		for field, list := range map[string]string{"reservedCPUs": cfg.ReservedCPUs, "bePool": cfg.BEPool} {
			if _, err := topology.ParseCPUList(list); err != nil {
				t.Fatalf("accepted %s: %v", field, err)
			}
		}
		for _, w := range cfg.Workloads {
			if err := cgroup.CheckRel(cfg.CgroupPath(w)); err != nil {
				t.Fatalf("workload %q: cgroup path %q: %v", w.Name, cfg.CgroupPath(w), err)
			}
			if p := w.CPUPolicy; (p != "" && p != CPUPolicyShared && !w.Dedicated()) || (w.Dedicated() && (w.Match == nil || w.Match.LibvirtDomain == "")) {
				t.Fatalf("workload %q: accepted cpuPolicy %q with match %+v", w.Name, p, w.Match)
			}
		}
		out, err := yaml.Marshal(cfg)
		if err != nil {
			t.Fatalf("cannot write back %+v: %v", cfg, err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("written back as\n%s\nwhich does not parse: %v", out, err)
		}
		if out2, _ := yaml.Marshal(again); string(out2) != string(out) {
			t.Fatalf("round trip changed\n%s\nto\n%s", out, out2)
		}
	})
}

// yamlString quotes s as a YAML (JSON) string, so a seed lands in one field.
func yamlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
