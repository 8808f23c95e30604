package hostconfig

import (
	"strings"
	"testing"
)

const good = `
apiVersion: locus.io/v1alpha1
kind: HostConfig
reservedCPUs: "0"
resourceQOSConfig:
  clusterStrategy: {lsClass: {memoryQOS: {enable: true}}}
workloads:
- name: redis
  cgroup: locus.slice/redis
  qosClass: LS
  resources:
    requests: {cpu: "2", memory: 2Gi}
    limits: {cpu: "4", memory: 6Gi}
  annotations:
    cpuset-scheduler: "true"
    koordinator.sh/memoryQOS: '{"policy": "auto"}'
- name: batch
  command: ["stress", "--vm", "1"]
  qosClass: BE
- name: vm1
  match: {comm: "qemu-system-*", cmdline: "guest=vm1", uid: 107}
`

func TestParseGood(t *testing.T) {
	cfg, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Workloads) != 3 || cfg.ReservedCPUs != "0" || cfg.CgroupParent != DefaultCgroupParent {
		t.Fatalf("unexpected config: %+v", cfg)
	}
	redis := cfg.Workloads[0]
	if got := redis.Resources.Limits.Memory.Value(); got != 6<<30 {
		t.Errorf("limits.memory = %d, want %d", got, 6<<30)
	}
	if got := redis.Resources.Requests.CPU.MilliValue(); got != 2000 {
		t.Errorf("requests.cpu = %dm, want 2000m", got)
	}
	if !strings.Contains(string(cfg.ResourceQOSConfig), `"enable":true`) {
		t.Errorf("resourceQOSConfig not kept as JSON: %s", cfg.ResourceQOSConfig)
	}
	if got := cfg.CgroupPath(cfg.Workloads[1]); got != "locus.slice/batch" {
		t.Errorf("CgroupPath(batch) = %q", got)
	}
	if got := cfg.CgroupPath(redis); got != "locus.slice/redis" {
		t.Errorf("CgroupPath(redis) = %q", got)
	}
}

func TestParseErrorsNameTheField(t *testing.T) {
	head := "apiVersion: locus.io/v1alpha1\nkind: HostConfig\n"
	cases := []struct{ name, doc, want string }{
		{"wrong kind", "apiVersion: locus.io/v1alpha1\nkind: Pod\n", "apiVersion/kind"},
		{"typo field", head + "reservedCPU: \"0\"\n", "reservedCPU"},
		{"bad reserved", head + "reservedCPUs: \"0-\"\n", "reservedCPUs"},
		{"bad bePool", head + "bePool: \"x\"\n", "bePool"},
		{"escape cgroup", head + "workloads:\n- {name: a, cgroup: ../etc}\n", "cgroup"},
		{"absolute cgroup", head + "workloads:\n- {name: a, cgroup: /sys}\n", "cgroup"},
		{"bad parent", head + "cgroupParent: a/../..\n", "cgroupParent"},
		{"two sources", head + "workloads:\n- {name: a, cgroup: x, command: [sleep]}\n", "exactly one"},
		{"no source", head + "workloads:\n- {name: a}\n", "exactly one"},
		{"bad name", head + "workloads:\n- {name: A/b, command: [x]}\n", "name"},
		{"dup name", head + "workloads:\n- {name: a, command: [x]}\n- {name: a, command: [y]}\n", "used twice"},
		{"bad qos", head + "workloads:\n- {name: a, command: [x], qosClass: gold}\n", "qosClass"},
		{"empty match", head + "workloads:\n- {name: a, match: {}}\n", "match"},
		{"bad pattern", head + "workloads:\n- {name: a, match: {comm: \"[\"}}\n", "match.comm"},
		{"request over limit", head + "workloads:\n- name: a\n  command: [x]\n  resources: {requests: {cpu: 3}, limits: {cpu: 2}}\n", "requests.cpu"},
		{"bad quantity", head + "workloads:\n- name: a\n  command: [x]\n  resources: {limits: {memory: lots}}\n", "quantities"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// comm and cmdline are chosen by whoever starts a process: a match must
// also name whose processes it adopts.
func TestMatchMustNameAnOwner(t *testing.T) {
	head := "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n"
	_, err := Parse([]byte(head + "- {name: vm1, match: {comm: qemu-system-*, cmdline: guest=vm1}}\n"))
	if err == nil || !strings.Contains(err.Error(), "match") || !strings.Contains(err.Error(), "uid, gid, exe or unit") {
		t.Fatalf("a match naming no owner: error %v, want one naming match and uid, gid, exe or unit", err)
	}
	for _, owner := range []string{"uid: 107", "gid: 36", "exe: /usr/bin/qemu-system-x86_64", "unit: vm1.service"} {
		if _, err := Parse([]byte(head + "- {name: vm1, match: {comm: qemu-system-*, " + owner + "}}\n")); err != nil {
			t.Errorf("match with %s: %v", owner, err)
		}
	}
	for owner, field := range map[string]string{"uid: -1": "match.uid", "exe: bin/qemu": "match.exe", "unit: a/b.service": "match.unit"} {
		if _, err := Parse([]byte(head + "- {name: vm1, match: {comm: q, " + owner + "}}\n")); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("match with %s: error %v, want one naming %s", owner, err, field)
		}
	}
}

// Errors name the path of the field, and a misspelt key gets the field it
// likely meant.
func TestErrorsNameTheFieldPath(t *testing.T) {
	doc := "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n- {name: a, command: [x]}\n- {name: b, command: [x]}\n- name: c\n  command: [x]\n"
	for extra, want := range map[string]string{
		"  resources: {limits: {cpu: \"-1\"}}\n":           `workloads[2].resources.limits.cpu: -1 is negative`,
		"  resources: {limits: {cpu: \"1\", memroy: 1}}\n": `workloads[2].resources.limits.memroy: unknown field (did you mean "memory"?)`,
		"  resoures: {}\n":                                 `workloads[2].resoures: unknown field (did you mean "resources"?)`,
		"  qosClass: gold\n":                               `workloads[2].qosClass "gold"`,
		// apimachinery's parser would not end on these: refused before it.
		"  resources: {requests: {memory: \"1e-99999999999\"}}\n":     `workloads[2].resources.requests.memory: "1e-99999999999" has an exponent beyond ±308`,
		"  resources: {limits: {hugepages-2Mi: \"22e2212222111\"}}\n": `workloads[2].resources.limits.hugepages-2Mi: "22e2212222111" has an exponent beyond ±308`,
	} {
		_, err := Parse([]byte(doc + extra))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: error %v, want one starting %q", extra, err, want)
		}
	}
	if _, err := Parse([]byte("apiVersion: locus.io/v1alpha1\nkind: HostConfig\nreservedCPU: \"0\"\n")); err == nil ||
		err.Error() != `reservedCPU: unknown field (did you mean "reservedCPUs"?)` {
		t.Errorf("top-level typo: %v", err)
	}
}

// A libvirt domain is named alone, by a name libvirt would find it by;
// hostile names are refused naming the field.
func TestMatchLibvirtDomain(t *testing.T) {
	head := "apiVersion: locus.io/v1alpha1\nkind: HostConfig\nworkloads:\n"
	for _, name := range []string{"vm1", "web front", "db.prod-2", "ünïcode-vm1"} {
		c, err := Parse([]byte(head + "- name: vm\n  match: {libvirtDomain: \"" + name + "\"}\n"))
		if err != nil || c.Workloads[0].Match.LibvirtDomain != name || !c.Workloads[0].Match.NamesOwner() {
			t.Errorf("libvirtDomain %q: %v", name, err)
		}
	}
	for _, tc := range []struct{ match, want string }{
		{`{libvirtDomain: vm1, comm: qemu}`, "match.libvirtDomain: stands alone"},
		{`{libvirtDomain: vm1, uid: 107}`, "match.libvirtDomain: stands alone"},
		{`{libvirtDomain: "a/b"}`, `match.libvirtDomain: "a/b": a domain name has no '/'`},
		{`{libvirtDomain: "a\u001bb"}`, "a domain name has no '/', control character"},
		{`{libvirtDomain: "..--"}`, "has no letter or digit to find it by"},
		{`{libvirtDomain: "éé"}`, "has no letter or digit to find it by"},
		{`{libvirtDomain: "` + strings.Repeat("a", 256) + `"}`, "match.libvirtDomain: 256 bytes, more than 255"},
	} {
		_, err := Parse([]byte(head + "- {name: vm, match: " + tc.match + "}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "workloads[0]") {
			t.Errorf("%.60s: %v, want %q", tc.match, err, tc.want)
		}
	}
}
