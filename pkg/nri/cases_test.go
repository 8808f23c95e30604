package nri

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/nri/pkg/api"

	"github.com/locus-project/locus/internal/nritest"
)

func TestCreateContainerIsAdjusted(t *testing.T) {
	sock := filepath.Join(socketDir(t), "nri.sock")
	rt := newRuntime(t, sock)
	rt.Start(t)
	h := probeTable()
	h.values["app"] = Answer{Exclusive: true, Values: Values{CPUs: "2-3", Mems: "1",
		Unified: map[string]string{"memory.low": "1048576", "memory.min": "0"}}}
	h.values["v1"] = Answer{Values: Values{CPUs: "0-7", Mems: "0-1", Reservation: 4096}}
	var log logBuf
	startPlugin(t, h, Options{Socket: sock}, &log)
	registered(t, rt)

	r, err := rt.Create(testPod, ctr("app", ""))
	if err != nil {
		t.Fatal(err)
	}
	res := r.GetAdjust().GetLinux().GetResources()
	if got := res.GetCpu().GetCpus(); got != "2-3" {
		t.Errorf("cpuset.cpus = %q, want 2-3", got)
	}
	if got := res.GetCpu().GetMems(); got != "1" {
		t.Errorf("cpuset.mems = %q, want 1", got)
	}
	if got := res.GetUnified(); got["memory.low"] != "1048576" || got["memory.min"] != "0" {
		t.Errorf("unified = %v", got)
	}
	r, err = rt.Create(testPod, ctr("v1", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.GetAdjust().GetLinux().GetResources().GetMemory().GetReservation().GetValue(); got != 4096 {
		t.Errorf("memory reservation = %d, want 4096", got)
	}
}

func TestFailOpenAndClosed(t *testing.T) {
	for _, tc := range []struct {
		name       string
		failClosed bool
		exclusive  bool
		wantErr    bool
		told       string
	}{
		{"open by default", false, true, false, "app:open"},
		{"closed for exclusive CPUs", true, true, true, "app:blocked"},
		{"closed flag leaves shared pods open", true, false, false, "app:open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := filepath.Join(socketDir(t), "nri.sock")
			rt := newRuntime(t, sock)
			rt.Start(t)
			h := probeTable()
			h.values["app"] = Answer{Exclusive: tc.exclusive, Err: errors.New("CPUs taken since the scheduler chose")}
			var log logBuf
			startPlugin(t, h, Options{Socket: sock, FailClosed: tc.failClosed}, &log)
			registered(t, rt)
			r, err := rt.Create(testPod, ctr("app", ""))
			if (err != nil) != tc.wantErr {
				t.Fatalf("create: err %v, want error %v", err, tc.wantErr)
			}
			if err == nil && r.GetAdjust().GetLinux().GetResources().GetCpu().GetCpus() != "" {
				t.Errorf("an undecided container got cpus %q", r.GetAdjust().GetLinux().GetResources().GetCpu().GetCpus())
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if !slices.Equal(h.unpinned, []string{tc.told}) {
				t.Errorf("unpinned told %v, want [%s]", h.unpinned, tc.told)
			}
		})
	}
}

func TestSynchronizeUpdatesOnlyWhatDiffers(t *testing.T) {
	sock := filepath.Join(socketDir(t), "nri.sock")
	stopped := ctr("stopped", "")
	stopped.State = api.ContainerState_CONTAINER_STOPPED
	rt := nritest.New(t, sock, []*api.PodSandbox{testPod}, []*api.Container{ctr("same", "2,3"), ctr("moved", "0-7"), ctr("unknown", "0-7"), stopped})
	rt.Start(t)
	h := probeTable()
	h.values["same"] = Answer{Values: Values{CPUs: "2-3"}}
	h.values["moved"] = Answer{Values: Values{CPUs: "4-5", Mems: "0"}}
	h.values["stopped"] = Answer{Values: Values{CPUs: "6"}}
	var log logBuf
	p := startPlugin(t, h, Options{Socket: sock}, &log)
	registered(t, rt)
	updates, _ := rt.Updates()
	if len(updates) != 1 || updates[0].GetContainerId() != "id-moved" {
		t.Fatalf("updates %v, want one for id-moved", updates)
	}
	if got := updates[0].GetLinux().GetResources().GetCpu().GetCpus(); got != "4-5" {
		t.Errorf("update cpus %q, want 4-5", got)
	}
	if s := p.State(); !s.Connected || s.Synchronized != 1 || !strings.Contains(s.Runtime, "containerd") {
		t.Errorf("state %+v", s)
	}
}

func TestUpdateContainerKeepsLocusValues(t *testing.T) {
	sock := filepath.Join(socketDir(t), "nri.sock")
	rt := newRuntime(t, sock)
	rt.Start(t)
	h := probeTable()
	h.values["app"] = Answer{Values: Values{CPUs: "2-3", Mems: "0"}}
	var log logBuf
	startPlugin(t, h, Options{Socket: sock}, &log)
	registered(t, rt)
	// The kubelet's CPU manager would put the container back on every CPU.
	r, err := rt.UpdateContainer(context.Background(), &api.UpdateContainerRequest{Pod: testPod, Container: ctr("app", "2-3"),
		LinuxResources: &api.LinuxResources{Cpu: &api.LinuxCPU{Cpus: "0-7"}}})
	if err != nil {
		t.Fatal(err)
	}
	var cpus []string
	for _, u := range r.GetUpdate() {
		if u.GetContainerId() == "id-app" {
			cpus = append(cpus, u.GetLinux().GetResources().GetCpu().GetCpus())
		}
	}
	if !slices.Equal(cpus, []string{"2-3"}) {
		t.Errorf("update keeps cpus %v, want [2-3]", cpus)
	}
}

func TestStopAndRemoveFree(t *testing.T) {
	sock := filepath.Join(socketDir(t), "nri.sock")
	rt := newRuntime(t, sock)
	rt.Start(t)
	h := probeTable()
	var log logBuf
	startPlugin(t, h, Options{Socket: sock}, &log)
	registered(t, rt)
	ctx := context.Background()
	if _, err := rt.StopContainer(ctx, &api.StopContainerRequest{Pod: testPod, Container: ctr("app", "")}); err != nil {
		t.Fatal(err)
	}
	if err := rt.RemoveContainer(ctx, &api.RemoveContainerRequest{Pod: testPod, Container: ctr("app", "")}); err != nil {
		t.Fatal(err)
	}
	if err := rt.StopPodSandbox(ctx, &api.StopPodSandboxRequest{Pod: testPod}); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if want := []string{"web/app", "web/app", "web/"}; !slices.Equal(h.gone, want) {
		t.Errorf("gone %v, want %v", h.gone, want)
	}
}

// The socket missing, then the runtime up, killed and up again: each
// change is logged once, and every connection synchronizes again. The
// runtime runs in a process of its own, so that killing it closes the
// connection as a runtime restart does.
func TestReconnects(t *testing.T) {
	sock := filepath.Join(socketDir(t), "nri.sock")
	h := probeTable()
	var log logBuf
	p := startPlugin(t, h, Options{Socket: sock}, &log)
	eventually(t, "a missing socket to be seen", func() bool { return strings.Contains(p.State().Reason, "does not exist") })
	// Several backoffs pass with the socket still missing.
	eventually(t, "retries", func() bool { return p.State().Since.Before(timeNowMinus(300)) })
	for round := 1; round <= 2; round++ {
		kill := runtimeProcess(t, sock)
		eventually(t, "the connection", func() bool { s := p.State(); return s.Connected && s.Synchronized == round })
		kill()
		eventually(t, "the disconnection", func() bool { return !p.State().Connected })
	}
	// The killed runtime's socket stays behind, refusing, for several backoffs.
	time.Sleep(300 * time.Millisecond)
	out := log.String()
	for _, c := range []struct {
		text string
		most int
	}{{"does not exist", 1}, {"refuses connections", 2}, {"NRI: connected", 2}, {"closed the connection", 2}} {
		if n := strings.Count(out, c.text); n < 1 || n > c.most {
			t.Errorf("%q logged %d times, want 1 to %d (once per transition):\n%s", c.text, n, c.most, out)
		}
	}
}

// runtimeProcess runs the NRI runtime side in a child process (this test
// binary, TestRuntimeProcess) and returns how to kill it.
func runtimeProcess(t *testing.T, sock string) (kill func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRuntimeProcess$")
	cmd.Env = append(os.Environ(), "LOCUS_NRI_TEST_SOCKET="+sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	kill = func() {
		if !done {
			done = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(kill)
	return kill
}

// TestRuntimeProcess is the child of runtimeProcess; run by itself it
// does nothing.
func TestRuntimeProcess(t *testing.T) {
	sock := os.Getenv("LOCUS_NRI_TEST_SOCKET")
	if sock == "" {
		return
	}
	os.Remove(sock) // left by the killed one
	newRuntime(t, sock).Start(t)
	select {}
}
