package decide

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroupfile"
	cpualloc "github.com/locus-project/locus/pkg/cpualloc"
	"github.com/locus-project/locus/pkg/memqos"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/workload"
)

// scoped is a pod of a sidecar (log, 1 CPU) and two app containers (web 2,
// cache 1) decided on CPUs 2-5, its containers sharing them or, with
// container scope, each with its part.
func scoped(container bool, decided map[string]cpuset.CPUSet) workload.Workload {
	w := workload.Workload{Name: "team/web", Cgroup: "kubepods/podu", Containers: []workload.Container{
		{Name: "log", Cgroup: "kubepods/podu/log"}, {Name: "web", Cgroup: "kubepods/podu/web"},
		{Name: "cache", Cgroup: "kubepods/podu/cache"}},
		CPU:    workload.CPUNeed{Exclusive: true, CPUs: 4, Policy: cpualloc.FullPCPUsThenThreads, Decided: cpuset.New(2, 3, 4, 5)},
		MemQoS: memqos.Workload{Class: memqos.ClassLS, ClassFrom: "label " + workload.LabelQoSClass}}
	if container {
		w.CPU.Containers = []cpualloc.ContainerCPUs{{Name: "log", Kind: cpualloc.Sidecar, CPUs: 1},
			{Name: "web", Kind: cpualloc.App, CPUs: 2}, {Name: "cache", Kind: cpualloc.App, CPUs: 1}}
		w.CPU.DecidedContainers = decided
	}
	return w
}

// Siblings split on intel-2s-48c-ht: core c is CPUs c and c+96, so 2-5 is
// four cores in part and the partition takes one thread of each.
func TestComputeCPUScope(t *testing.T) {
	for _, tc := range []struct {
		name      string
		w         workload.Workload
		want      map[string]string
		wantProbs []string
	}{
		{"pod scope: every container on the pod's CPUs", scoped(false, nil),
			map[string]string{"log": "2-5", "web": "2-5", "cache": "2-5"}, nil},
		{"container scope: each its part", scoped(true, nil),
			map[string]string{"log": "2", "web": "3-4", "cache": "5"}, nil},
		{"container scope, the scheduler agreeing", scoped(true,
			map[string]cpuset.CPUSet{"log": cpuset.New(2), "web": cpuset.New(3, 4), "cache": cpuset.New(5)}),
			map[string]string{"log": "2", "web": "3-4", "cache": "5"}, nil},
		{"container scope, the scheduler differing: the agent's applies", scoped(true,
			map[string]cpuset.CPUSet{"log": cpuset.New(5), "web": cpuset.New(3, 4), "cache": cpuset.New(2)}),
			map[string]string{"log": "2", "web": "3-4", "cache": "5"},
			[]string{`ContainerCPUSetsConflict: annotation locus.io/container-cpusets: the scheduler divided the pod's CPUs as {"cache":"2","log":"5","web":"3-4"}, the agent as {"cache":"5","log":"2","web":"3-4"}; applying the agent's`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compute(Input{Topology: fixture.MustBuild(fixture.Intel2S96C), Reserved: cpuset.New(0), Workloads: []workload.Workload{tc.w}})
			var probs []string
			for _, p := range d.Problems {
				probs = append(probs, p.Reason+": "+p.Message)
			}
			if strings.Join(probs, "\n") != strings.Join(tc.wantProbs, "\n") {
				t.Errorf("problems %q, want %q", probs, tc.wantProbs)
			}
			for name, want := range tc.want {
				if got, _ := opValue(d.Ops, "kubepods/podu/"+name, cgroupfile.CPUSetCPUs); got != want {
					t.Errorf("%s: cpuset.cpus %q, want %q", name, got, want)
				}
			}
			if len(tc.w.CPU.Containers) > 0 && d.Workloads[0].ContainerCPUs["web"] != tc.want["web"] {
				t.Errorf("status: %v", d.Workloads[0].ContainerCPUs)
			}
		})
	}
}

// A partition that cannot be made (the pod's CPUs were resized away from
// the containers' counts) is a problem, and the containers share the CPUs.
func TestComputeCPUScopeNotDivided(t *testing.T) {
	w := scoped(true, nil)
	w.CPU.Containers[1].CPUs = 3 // 5 asked of 4
	d := Compute(Input{Topology: fixture.MustBuild(fixture.Intel2S96C), Reserved: cpuset.New(0), Workloads: []workload.Workload{w}})
	if len(d.Problems) != 1 || d.Problems[0].Reason != "ContainerCPUsNotDivided" ||
		!strings.Contains(d.Problems[0].Message, `container "cache" asks for 1 CPUs, but 0 of the pod's 4 are left`) {
		t.Errorf("problems %v", d.Problems)
	}
	for _, name := range []string{"log", "web", "cache"} {
		if got, _ := opValue(d.Ops, "kubepods/podu/"+name, cgroupfile.CPUSetCPUs); got != "2-5" {
			t.Errorf("%s: cpuset.cpus %q, want the pod's 2-5", name, got)
		}
	}
}

// A pod's containers its status does not list yet get the cpuset all its
// containers get: its CPUs, or the pool of a pod without CPUs of its own.
// Those of a container-scope pod, or of a pod the kubelet pinned, get
// nothing (each container's cpuset depends on its name); nor does any
// other file get written for them.
func TestComputeUnlisted(t *testing.T) {
	topo := fixture.MustBuild(fixture.Intel2S96C)
	const unlisted = "kubepods/podu/ffff"
	with := func(w workload.Workload) workload.Workload {
		w.Unlisted = []string{unlisted}
		return w
	}
	shared := with(workload.Workload{Name: "team/plain", UID: "uid-p", Cgroup: "kubepods/podu",
		MemQoS: memqos.Workload{Class: memqos.ClassLS, ClassFrom: "label " + workload.LabelQoSClass}})
	for _, tc := range []struct {
		name    string
		w       workload.Workload
		kubelet Kubelet
		want    string // cpuset.cpus; "" for none written
	}{
		{"pod scope", with(scoped(false, nil)), Kubelet{}, "2-5"},
		{"shared pool", shared, Kubelet{}, "1-95,97-191"},
		{"container scope", with(scoped(true, nil)), Kubelet{}, ""},
		{"pinned by the kubelet", shared, Kubelet{Policy: "static", Pinned: map[string]map[string]cpuset.CPUSet{"uid-p": {"app": cpuset.New(7)}}}, ""},
		{"memory pinned by the kubelet", shared, Kubelet{MemPinned: map[string]map[string]string{"uid-p": {"app": "0"}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compute(Input{Topology: topo, Reserved: cpuset.New(0, 96), Kubelet: tc.kubelet, Workloads: []workload.Workload{tc.w}})
			var knobs []string
			for _, op := range d.Ops {
				if op.Cgroup == unlisted {
					knobs = append(knobs, string(op.Knob))
				}
			}
			got, _ := opValue(d.Ops, unlisted, cgroupfile.CPUSetCPUs)
			if got != tc.want {
				t.Fatalf("cpuset.cpus %q, want %q", got, tc.want)
			}
			if mems, _ := opValue(d.Ops, unlisted, cgroupfile.CPUSetMems); tc.want != "" && (mems == "" || len(knobs) != 2 || knobs[0] != string(cgroupfile.CPUSetMems)) {
				t.Errorf("writes %v (cpuset.mems %q): want cpuset.mems then cpuset.cpus only", knobs, mems)
			}
			for _, r := range d.Restores {
				if r.Cgroup == unlisted {
					t.Errorf("restore %v of an unlisted container", r)
				}
			}
			// A container seen appearing after the decision gets the
			// same writes, from the same place.
			var ops []cgroupfile.Op
			for _, op := range d.Ops {
				if op.Cgroup == unlisted {
					ops = append(ops, op)
				}
			}
			p, ok := d.Unlisted[tc.w.Cgroup]
			if ok != (tc.want != "") {
				t.Fatalf("Unlisted[%s] present %v, want %v", tc.w.Cgroup, ok, tc.want != "")
			}
			if ok && !reflect.DeepEqual(p.Ops(unlisted), ops) {
				t.Errorf("Unlisted[%s].Ops %v, want the decision's %v", tc.w.Cgroup, p.Ops(unlisted), ops)
			}
		})
	}
}

// A pod whose cgroup the kubelet has not made yet (Awaited) is decided: an
// exclusive pod holds its CPUs, and the cpuset its containers will get is
// out (Unlisted) before any of them appears. Only a Guaranteed pod on a node
// whose kubelet pins (its CPU or memory manager static, or its checkpoint
// unreadable) gets neither: the kubelet may yet pin it as it creates the
// containers.
func TestComputeAwaited(t *testing.T) {
	topo := fixture.MustBuild(fixture.Intel2S96C)
	awaited := func(w workload.Workload, kube memqos.KubeQoS) workload.Workload {
		w.Containers, w.Awaited, w.UID, w.QoS.Kube = nil, true, "uid-a", kube
		return w
	}
	exclusive := scoped(false, nil)
	shared := workload.Workload{Name: "team/plain", Cgroup: "kubepods/podu"}
	static := Kubelet{Policy: "static", Pinned: map[string]map[string]cpuset.CPUSet{}}
	memStatic := Kubelet{Policy: "none", MemPinned: map[string]map[string]string{}}
	for _, tc := range []struct {
		name    string
		w       workload.Workload
		kubelet Kubelet
		want    string // the Unlisted cpuset.cpus; "" for none
	}{
		{"exclusive", awaited(exclusive, memqos.Guaranteed), Kubelet{}, "2-5"},
		{"exclusive, the kubelet's policy none", awaited(exclusive, memqos.Guaranteed), Kubelet{Policy: "none"}, "2-5"},
		{"shared Burstable", awaited(shared, memqos.Burstable), Kubelet{}, "1-95,97-191"},
		{"shared Burstable, the kubelet static", awaited(shared, memqos.Burstable), static, "1-95,97-191"},
		{"Guaranteed, the kubelet static", awaited(shared, memqos.Guaranteed), static, ""},
		{"exclusive Guaranteed, the kubelet static", awaited(exclusive, memqos.Guaranteed), static, ""},
		{"Guaranteed, the memory manager static", awaited(shared, memqos.Guaranteed), memStatic, ""},
		{"Guaranteed, made already, the kubelet static", func() workload.Workload {
			w := awaited(shared, memqos.Guaranteed)
			w.Awaited = false
			return w
		}(), static, "1-95,97-191"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compute(Input{Topology: topo, Reserved: cpuset.New(0, 96), Kubelet: tc.kubelet, Workloads: []workload.Workload{tc.w}})
			p, ok := d.Unlisted[tc.w.Cgroup]
			if got := p.CPUs; ok != (tc.want != "") || got != tc.want {
				t.Fatalf("Unlisted[%s] = %+v (present %v), want cpuset.cpus %q", tc.w.Cgroup, p, ok, tc.want)
			}
			if tc.w.CPU.Exclusive {
				// None held while the kubelet may yet pin the pod.
				if a, ok := d.Assignments[tc.w.Name]; ok != (tc.want != "") || a.CPUs.String() != tc.want {
					t.Errorf("assignment %+v (present %v), want the CPUs %q held", a, ok, tc.want)
				}
			}
		})
	}
}
