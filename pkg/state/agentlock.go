package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// AgentLockFile is the file a running agent holds an exclusive flock on,
// under its state directory.
const AgentLockFile = "agent.lock"

// lockWait is how long a starting agent waits for the agent lock. The
// kernel drops a flock when its holder dies, but an agent killed with
// SIGKILL still holds it until the kernel has torn the process down (its
// last thread out of a cgroup or page-migration call, a child between fork
// and exec sharing the descriptor): a restart in that window must wait for
// it, not fail. A live agent holds the lock for good, so the wait ends in
// an error naming it.
var lockWait = 5 * time.Second

// OpenAgent opens the state directory of an agent (creating it as Open
// does) and takes its agent lock, which the agent holds until it exits:
// closing the returned file releases it.
func OpenAgent(dir string) (*Store, *os.File, error) {
	s, err := Open(dir)
	if err != nil {
		return nil, nil, err
	}
	lock, err := LockAgent(dir)
	if err != nil {
		return nil, nil, err
	}
	return s, lock, nil
}

// LockAgent takes the exclusive lock of the state directory dir, which
// makes this the only agent using it, and writes this process's pid into
// the lock file so that a refusal can name the holder.
func LockAgent(dir string) (*os.File, error) {
	path := filepath.Join(dir, AgentLockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("agent lock: %w", err)
	}
	deadline := time.Now().Add(lockWait)
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("agent lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			holder := lockHolder(f)
			f.Close()
			return nil, fmt.Errorf("another locus agent%s is running with state dir %s (its lock %s was still held after %s)",
				holder, strings.TrimSuffix(path, "/"+AgentLockFile), path, lockWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// lockHolder describes the pid recorded in the lock file, if any.
func lockHolder(f *os.File) string {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil || pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}
