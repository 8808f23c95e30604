// Package procfs reads the few things the agent needs from /proc: the pids,
// a process's name, command line, environment and start time. Every reader
// honours a proc root so tests and containers can point it elsewhere.
package procfs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// DefaultRoot is where procfs is normally mounted.
const DefaultRoot = "/proc"

// FS is a proc filesystem mounted at a root.
type FS struct{ root string }

// New returns the proc filesystem at root ("" means /proc).
func New(root string) FS {
	if root == "" {
		root = DefaultRoot
	}
	return FS{root: filepath.Clean(root)}
}

// Root is the directory procfs is read from.
func (fs FS) Root() string { return fs.root }

func (fs FS) path(pid int, name string) string {
	return filepath.Join(fs.root, strconv.Itoa(pid), name)
}

// PIDs lists the processes (thread-group ids), sorted.
func (fs FS) PIDs() ([]int, error) {
	ents, err := os.ReadDir(fs.root)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 && e.IsDir() {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// Comm is the kernel's short name of the process (/proc/PID/comm).
func (fs FS) Comm(pid int) (string, error) {
	b, err := os.ReadFile(fs.path(pid, "comm"))
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// Cmdline is the process's argument vector; empty for kernel threads and
// zombies.
func (fs FS) Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(fs.path(pid, "cmdline"))
	if err != nil {
		return nil, err
	}
	return splitNUL(b), nil
}

// Environ is the environment the process was started with (as KEY=VALUE);
// reading another user's needs root.
func (fs FS) Environ(pid int) ([]string, error) {
	b, err := os.ReadFile(fs.path(pid, "environ"))
	if err != nil {
		return nil, err
	}
	return splitNUL(b), nil
}

func splitNUL(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	parts := bytes.Split(b, []byte{0})
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// Stat reads /proc/PID/stat.
func (fs FS) Stat(pid int) (Stat, error) {
	b, err := os.ReadFile(fs.path(pid, "stat"))
	if err != nil {
		return Stat{}, err
	}
	st, err := ParseStat(string(b))
	if err != nil {
		return Stat{}, fmt.Errorf("%s: %w", fs.path(pid, "stat"), err)
	}
	return st, nil
}

// Alive reports whether pid is still the process that started at startTime
// and has not exited: a recycled pid has another start time, and a zombie
// (exited, not yet reaped) is not alive.
func (fs FS) Alive(pid int, startTime uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := fs.Stat(pid)
	return err == nil && st.StartTime == startTime && st.Running()
}
