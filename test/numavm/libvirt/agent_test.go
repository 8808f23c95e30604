package libvirt

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/status"
)

// settle bounds how long the agent takes to act under TCG on a loaded host.
const settle = 90 * time.Second

// hostConfig names the domain by its libvirt name and dedicates a CPU to
// each of its two vCPUs: two exclusive CPUs, so the emulator runs in the
// shared pool.
const hostConfig = `apiVersion: locus.io/v1alpha1
kind: HostConfig
workloads:
- name: vm
  match: {libvirtDomain: ` + vmName + `}
  qosClass: LSR
  cpuPolicy: dedicated
  resources: {limits: {cpu: "2"}}
  annotations: {cpuset-scheduler: "true"}
`

type agent struct {
	dir  string
	cmd  *exec.Cmd
	log  *os.File
	from time.Time
}

func startAgent(t *testing.T) *agent {
	t.Helper()
	a := &agent{dir: t.TempDir()}
	write(t, filepath.Join(a.dir, "host.yaml"), hostConfig)
	log, err := os.Create(filepath.Join(a.dir, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	a.log, a.from = log, time.Now()
	a.cmd = exec.Command("locus", "agent", "--standalone", "--config", filepath.Join(a.dir, "host.yaml"),
		"--state-dir", a.state(), "--metrics-addr", "", "--resync", "2s")
	a.cmd.Stdout, a.cmd.Stderr = log, log
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.stop(t)
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(a.dir, "agent.log"))
			t.Logf("agent log:\n%s", tail(string(b), 60))
		}
	})
	return a
}

func (a *agent) state() string { return filepath.Join(a.dir, "state") }

// emptyConfig is the HostConfig with the domain's workload taken out.
const emptyConfig = `apiVersion: locus.io/v1alpha1
kind: HostConfig
workloads: []
`

// release takes the domain's workload out of the HostConfig, renamed into
// place as editors do, and waits until the threads' cgroups have the
// cpusets they had before the agent: a workload leaving the config gets
// its files back (a stopped agent keeps them, so that a restart moves
// nothing).
func (a *agent) release(t *testing.T, d *domain, before map[string][2]string) {
	t.Helper()
	tmp := filepath.Join(a.dir, "host.yaml.new")
	write(t, tmp, emptyConfig)
	if err := os.Rename(tmp, filepath.Join(a.dir, "host.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the threads' cpusets back as libvirt left them", settle, func() (bool, string) {
		after := cpusets(t, d.threadCgroups())
		return equal(after, before), formatSeen(after)
	})
}

// stop ends the agent with SIGTERM, as a service manager does; it gives the
// cgroups back as it exits.
func (a *agent) stop(t *testing.T) {
	t.Helper()
	if a.cmd == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- a.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("agent exited: %v", err)
		}
	case <-time.After(settle):
		_ = a.cmd.Process.Kill()
		<-done
		t.Errorf("agent did not stop within %s of SIGTERM", settle)
	}
	_ = a.log.Close()
	a.cmd = nil
}

// dedicated waits until each vCPU's cgroup holds one CPU of its own and
// the emulator's none of theirs, read from the cgroup files, and returns
// each thread cgroup's CPUs by name (vcpu0, emulator).
func (a *agent) dedicated(t *testing.T, d *domain) map[string]string {
	t.Helper()
	got := map[string]string{}
	waitFor(t, "each vCPU on a CPU of its own, the emulator elsewhere", settle, func() (bool, string) {
		vcpus, seen := parse(t, "none", ""), cpusets(t, d.threadCgroups())
		for _, cg := range d.threadCgroups() {
			got[filepath.Base(cg)] = seen[cg][0]
		}
		for i := 0; i < d.vcpus; i++ {
			cg := d.threadCgroups()[i]
			eff := parse(t, cg, knob(t, cg, "cpuset.cpus.effective"))
			if cpus := parse(t, cg, seen[cg][0]); cpus.Size() != 1 || !cpus.Equals(eff) || vcpus.Intersection(cpus).Size() > 0 {
				return false, statusLine(a, seen)
			}
			vcpus = vcpus.Union(eff)
		}
		emu := d.threadCgroups()[d.vcpus]
		eff := parse(t, emu, knob(t, emu, "cpuset.cpus.effective"))
		return !eff.IsEmpty() && eff.Intersection(vcpus).IsEmpty(), statusLine(a, seen)
	})
	t.Logf("the agent pinned the domain's threads: %v", got)
	return got
}

func statusLine(a *agent, seen map[string][2]string) string {
	st, err := status.Read(a.state())
	if err != nil {
		return err.Error()
	}
	var probs []string
	for _, w := range st.Workloads {
		probs = append(probs, w.Problems...)
	}
	return strings.Join(probs, "; ") + " " + formatSeen(seen)
}

func formatSeen(seen map[string][2]string) string {
	var parts []string
	for cg, v := range seen {
		parts = append(parts, filepath.Base(cg)+"="+v[0]+"/"+v[1])
	}
	return strings.Join(parts, " ")
}

// statusShowsVCPUs: locus status lists each vCPU's CPU of the domain.
func (a *agent) statusShowsVCPUs(t *testing.T, pinned map[string]string) {
	t.Helper()
	waitFor(t, "locus status naming each vCPU's CPU", settle, func() (bool, string) {
		out, err := exec.Command("locus", "status", "--state-dir", a.state()).CombinedOutput()
		if err != nil {
			return false, string(out)
		}
		for name, cpus := range pinned {
			if !strings.Contains(string(out), name+" "+cpus) {
				return false, string(out)
			}
		}
		return strings.Contains(string(out), "libvirt domain "+vmName), string(out)
	})
}
