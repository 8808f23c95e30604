package agent

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/cgroup"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/hostconfig"
	"github.com/locus-project/locus/pkg/hostsource"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/workload"
)

func parseWorkloads(t *testing.T, doc string) []resolved {
	t.Helper()
	cfg, err := hostconfig.Parse([]byte(head + "workloads:\n" + doc))
	if err != nil {
		t.Fatal(err)
	}
	return resolveWorkloads(cfg, hostPaths)
}

func TestResolveWorkloads(t *testing.T) {
	cases := []struct {
		name, doc string
		excl      bool
		cpus      int
		policy    cpualloc.Policy
		reqMilli  int64
		kube      memqos.KubeQoS
		be        bool
		problem   string
	}{
		{"best effort", "- {name: a, cgroup: x}", false, 0, "", 0, memqos.BestEffort, false, ""},
		{"guaranteed", "- {name: a, cgroup: x, resources: {limits: {cpu: 2, memory: 1Gi}}}", false, 0, "", 0, memqos.Guaranteed, false, ""},
		{"burstable", "- {name: a, cgroup: x, resources: {requests: {cpu: 1}, limits: {cpu: 2}}}", false, 0, "", 0, memqos.Burstable, false, ""},
		{"exclusive", "- {name: a, cgroup: x, resources: {limits: {cpu: 2}}, annotations: {cpuset-scheduler: \"true\"}}", true, 2, cpualloc.Policy(""), 0, memqos.Burstable, false, ""},
		{"static burst", "- {name: a, cgroup: x, resources: {requests: {cpu: 1}, limits: {cpu: 4}}, annotations: {cpuset-scheduler: \"true\", cpu-policy: static-burst}}", true, 4, cpualloc.StaticBurst, 1000, memqos.Burstable, false, ""},
		{"fraction", "- {name: a, cgroup: x, resources: {limits: {cpu: 1500m}}, annotations: {cpuset-scheduler: \"true\"}}", false, 0, "", 0, memqos.Burstable, false, "InvalidCPULimit"},
		{"no limit", "- {name: a, cgroup: x, annotations: {cpuset-scheduler: \"true\"}}", false, 0, "", 0, memqos.BestEffort, false, "InvalidCPULimit"},
		{"bad policy", "- {name: a, cgroup: x, resources: {limits: {cpu: 1}}, annotations: {cpuset-scheduler: \"true\", cpu-policy: fast}}", true, 1, cpualloc.Policy(""), 0, memqos.Burstable, false, "InvalidCPUPolicy"},
		{"be class", "- {name: a, command: [x], qosClass: be}", false, 0, "", 0, memqos.BestEffort, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := parseWorkloads(t, tc.doc)[0]
			n := r.plan.CPU
			if n.Exclusive != tc.excl || n.CPUs != tc.cpus || n.Policy != tc.policy || n.RequestMilli != tc.reqMilli {
				t.Errorf("cpu need = %+v", n)
			}
			if r.plan.QoS.Kube != tc.kube || r.plan.BE != tc.be {
				t.Errorf("kube QoS %s, BE %v; want %s, %v", r.plan.QoS.Kube, r.plan.BE, tc.kube, tc.be)
			}
			got := ""
			if len(r.problems) > 0 {
				got = r.problems[0].Reason
			}
			if got != tc.problem {
				t.Errorf("problem %q, want %q (%v)", got, tc.problem, r.problems)
			}
		})
	}
	r := parseWorkloads(t, "- {name: a, command: [x], qosClass: ls, labels: {koordinator.sh/qosClass: BE}, resources: {limits: {memory: 1Gi}}}")[0]
	if r.plan.MemQoS.Class != memqos.ClassLS || r.plan.MemQoS.ClassFrom != "label "+workload.LabelQoSClass || r.plan.MemQoS.Containers[0].RequestBytes != 1<<30 {
		t.Errorf("qosClass must win over the label and a limit defaults the request: %+v", r.plan.MemQoS)
	}
	if r.cgroup != "locus.slice/a" || r.source != FromCommand {
		t.Errorf("cgroup %q source %q", r.cgroup, r.source)
	}
}

func TestDefaultConfigFitsTheMachine(t *testing.T) {
	for _, cpus := range []int{1, 2} {
		cfg, err := hostsource.DefaultConfig(cpus)
		if err != nil {
			t.Fatal(err)
		}
		rs := resolveWorkloads(cfg.Host, hostPaths)
		if len(rs) != 2 || rs[0].source != FromCommand || !rs[1].plan.BE {
			t.Fatalf("default workloads: %+v", rs)
		}
		if rs[0].plan.CPU.Exclusive != (cpus >= 2) {
			t.Errorf("%d CPUs: demo-ls exclusive = %v", cpus, rs[0].plan.CPU.Exclusive)
		}
		if rs[0].spec.Command[0] != "/proc/self/exe" || rs[0].spec.Command[1] != "stress" {
			t.Errorf("demo runs %v, want locus stress", rs[0].spec.Command)
		}
	}
}

func TestMetricsAndBusyPort(t *testing.T) {
	if inGuest() {
		t.Skip("the NUMA test guest has no network, not even loopback")
	}
	tree := newCgroupTree(t, cgroup.V2, false, "0-3")
	tree.mkcg("pods/redis", "pods/batch")
	h := newHarness(t, tree, redisAndBatch, nil)
	h.reconcile()
	srv, err := h.a.serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := h.a.serve(ln.Addr().String()); err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("busy port: %v", err)
	}
	body := get(t, srv.Addr(), "/metrics")
	for _, want := range []string{
		`locus_workload_cpus{namespace="",pod="",pool="exclusive",workload="redis"} 2`,
		`locus_workload_numa_nodes{namespace="",pod="",workload="batch"} 1`,
		`locus_workload_memory_qos_bytes{knob="memory.low",namespace="",pod="",workload="redis"} 2.147483648e+09`,
		`locus_reconcile_duration_seconds_count 1`,
		`locus_unsupported_knobs{knob="memory.wmark_ratio"} 1`,
		`locus_cgroup_writes_total`, `locus_reconcile_errors_total 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if s := get(t, srv.Addr(), "/status"); !strings.Contains(s, `"name": "redis"`) {
		t.Errorf("/status = %s", s)
	}
}

func get(t *testing.T, addr, path string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// hostPaths is the HostConfig's own cgroup of each workload, nothing below.
func hostPaths(cfg *hostconfig.HostConfig, w hostconfig.Workload) (string, []string) {
	return cfg.CgroupPath(w), nil
}
