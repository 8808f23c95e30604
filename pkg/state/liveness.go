package state

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Running reports whether an agent holds the lock of stateDir. It reads
// /proc/locks rather than trying the lock itself, so that asking never makes
// an agent starting at that instant believe another one runs. A state
// directory without a lock file has never had an agent.
func Running(stateDir string) (bool, error) {
	fi, err := os.Stat(filepath.Join(stateDir, AgentLockFile))
	if err != nil {
		if os.IsNotExist(err) {
			return false, nil
		}
		return false, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false, fmt.Errorf("%s: no inode", AgentLockFile)
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false, err
	}
	return holdsFlock(string(locks), uint64(st.Dev), st.Ino), nil
}

// holdsFlock finds a granted flock on the inode in a /proc/locks text, whose
// lines read "1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF"; a waiting
// request's line has "->" after the number.
func holdsFlock(locks string, dev, ino uint64) bool {
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino)
	for line := range strings.SplitSeq(locks, "\n") {
		f := strings.Fields(line)
		if len(f) >= 6 && f[1] == "FLOCK" && f[5] == want {
			return true
		}
	}
	return false
}
