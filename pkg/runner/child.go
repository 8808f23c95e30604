package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// The command must never run outside its cgroup, not even for an instant.
// Go cannot run code between fork and exec, so the child starts as a copy of
// the locus binary (the stub, StubArg) that blocks reading a pipe; the parent
// moves it into the cgroup and only then sends the go byte, upon which the
// stub execve's the command in place. If the parent dies first, the stub
// reads end-of-file and exits without running the command.

// StubArg is the hidden sub-command that runs the stub: locus StubArg PATH ARGV...
const StubArg = "__run-exec"

const goByte = 'g'

// syncFD is the pipe's descriptor in the stub (the first of ExtraFiles).
const syncFD = 3

// Exit statuses of the stub when it cannot run the command, as shells use them.
const (
	StatusCannotExec = 126
	StatusNotFound   = 127
)

// Exec runs the command in the session's cgroup and waits for it, forwarding
// every signal received on sigs. exe is the locus binary; path the resolved
// command; argv its arguments, argv[0] included. It returns the command's
// exit status, 128+N when signal N killed it.
func (s *Session) Exec(exe, path string, argv []string, sigs <-chan os.Signal) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	cmd := &exec.Cmd{
		Path:       exe,
		Args:       append([]string{exe, StubArg, path}, argv...),
		Stdin:      os.Stdin,
		Stdout:     os.Stdout,
		Stderr:     os.Stderr,
		ExtraFiles: []*os.File{r},
	}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return 0, fmt.Errorf("start %s: %w", exe, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	if _, err := s.Cgroups.Join(s.Cgroup, cmd.Process.Pid); err != nil {
		w.Close() // the stub reads EOF and exits without running the command
		<-done
		return 0, fmt.Errorf("move the command into cgroup %s: %w", s.Cgroup, err)
	}
	// An error here means the stub already died (a forwarded signal, say);
	// its status says what happened.
	_, _ = w.Write([]byte{goByte})
	w.Close()
	for {
		select {
		case sig := <-sigs:
			_ = cmd.Process.Signal(sig)
		case err := <-done:
			return exitStatus(cmd.ProcessState, err)
		}
	}
}

// exitStatus is what a shell would report for the finished process.
func exitStatus(ps *os.ProcessState, waitErr error) (int, error) {
	if ps == nil {
		return 0, waitErr
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ps.ExitCode(), nil
}

// SignalStatus is the exit status of a run ended by sig before its command
// started, as if the command had been killed by it.
func SignalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128
}

// RunStub is the stub: it waits for the go byte on syncFD, then replaces
// itself with the command. It returns only on failure, with the exit status
// to use.
func RunStub(args []string) (int, error) {
	if len(args) < 2 {
		return StatusCannotExec, errors.New("internal stub: want PATH ARGV0 [ARGS...]")
	}
	sync := os.NewFile(syncFD, "locus-run-sync")
	var b [1]byte
	n, _ := sync.Read(b[:])
	sync.Close()
	if n != 1 || b[0] != goByte {
		// The parent could not place us in the cgroup, or died.
		return StatusCannotExec, errors.New("not released into the cgroup; command not started")
	}
	err := unix.Exec(args[0], args[1:], os.Environ())
	if errors.Is(err, fs.ErrNotExist) {
		return StatusNotFound, fmt.Errorf("exec %s: %w", args[0], err)
	}
	return StatusCannotExec, fmt.Errorf("exec %s: %w", args[0], err)
}
