package libvirt

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// libvirtd's configuration in the guest: no D-Bus, no polkit, no virtlogd,
// QEMU run as root without a security driver or namespaces, since the
// guest has none of what those need and the test is root already.
const (
	libvirtdConf = `unix_sock_dir = "/run/libvirt"
auth_unix_ro = "none"
auth_unix_rw = "none"
log_filters = "1:qemu.qemu_process 1:qemu.qemu_monitor_json 1:util.command 1:util.numa 3:*"
log_outputs = "1:file:/tmp/libvirt/libvirtd.log"
`
	qemuConf = `user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
namespaces = [ ]
stdio_handler = "file"
seccomp_sandbox = 0
`
	connect = "qemu:///system"
)

// daemon is libvirtd, started by the test and stopped when it ends.
type daemon struct {
	cmd    *exec.Cmd
	log    *os.File
	exited chan error // closed when libvirtd has exited
}

// startLibvirtd writes the configuration, installs locus as the numad
// libvirt runs (/usr/bin/numad, the path its build recorded) and starts
// libvirtd, waiting until virsh reaches it.
func startLibvirtd(t *testing.T) *daemon {
	t.Helper()
	reapQEMU(t)
	for _, d := range []string{"/etc/libvirt", "/tmp/libvirt", "/run/libvirt", "/var/lib/libvirt/qemu",
		"/var/cache/libvirt/qemu", "/var/log/libvirt/qemu", "/var/lib/libvirt/images"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, "/etc/libvirt/libvirtd.conf", libvirtdConf)
	write(t, "/etc/libvirt/qemu.conf", qemuConf)
	if err := os.Symlink("/usr/bin/locus", "/usr/bin/numad"); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	// libvirt looks its build's QEMU user and group up before it reads
	// qemu.conf's: they must exist, though QEMU runs as root here.
	appendLine(t, "/etc/passwd", "libvirt-qemu:x:64055:64055:Libvirt Qemu:/var/lib/libvirt:/bin/false")
	appendLine(t, "/etc/group", "libvirt-qemu:x:64055:")
	appendLine(t, "/etc/group", "kvm:x:64056:")
	log, err := os.Create("/tmp/libvirt/libvirtd.out")
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{log: log, cmd: exec.Command("libvirtd", "--config", "/etc/libvirt/libvirtd.conf"), exited: make(chan error, 1)}
	d.cmd.Stdout, d.cmd.Stderr = log, log
	start := time.Now()
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer watch(t, "libvirtd starting")()
	go func() { d.exited <- d.cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() { d.stop(t) })
	waitFor(t, "libvirtd answering virsh", startBound, func() (bool, string) {
		select {
		case err := <-d.exited:
			d.cmd = nil
			t.Fatalf("libvirtd exited: %v", err)
		default:
		}
		out, err := virshOut(10*time.Second, "version")
		return err == nil, fmt.Sprintf("%v: %s", err, out)
	})
	t.Logf("libvirtd up in %s", time.Since(start).Round(time.Millisecond))
	return d
}

func (d *daemon) stop(t *testing.T) {
	if d.cmd != nil {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(30 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
		d.cmd = nil
	}
	_ = d.log.Close()
	if t.Failed() {
		for _, f := range []string{"/tmp/libvirt/libvirtd.out", "/tmp/libvirt/libvirtd.log"} {
			b, _ := os.ReadFile(f)
			t.Logf("%s:\n%s", f, tail(string(b), 60))
		}
		logs, _ := filepath.Glob("/var/log/libvirt/qemu/*.log")
		for _, f := range logs {
			b, _ := os.ReadFile(f)
			t.Logf("%s:\n%s", f, tail(string(b), 30))
		}
	}
}

// virsh runs virsh against the system instance within bound, failing the
// test with its output when it fails.
func virsh(t *testing.T, bound time.Duration, args ...string) string {
	t.Helper()
	start := time.Now()
	out, err := virshOut(bound, args...)
	if err != nil {
		t.Fatalf("virsh %s: %v after %s:\n%s", strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond), out)
	}
	t.Logf("virsh %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out
}

func virshOut(bound time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	out, err := exec.CommandContext(ctx, "virsh", append([]string{"-c", connect}, args...)...).CombinedOutput()
	return string(out), err
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still not %s: %s", d, what, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
