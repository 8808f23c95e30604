package locality

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/utils/cpuset"
)

// ErrNoProcess reports a process that exited; it matches syscall.ESRCH so
// its text is the kernel's "no such process".
var ErrNoProcess = syscall.ESRCH

// Reader reads processes' memory placement from a proc filesystem.
type Reader struct {
	ProcRoot string // "" means /proc
	// BasePageKB is the base page size in KiB; 0 means this machine's.
	BasePageKB uint64
}

func (r Reader) root() string {
	if r.ProcRoot == "" {
		return "/proc"
	}
	return r.ProcRoot
}

func (r Reader) basePageKB() uint64 {
	if r.BasePageKB == 0 {
		return uint64(os.Getpagesize() / 1024)
	}
	return r.BasePageKB
}

// ProcessMemory is where one process's resident memory lives.
type ProcessMemory struct {
	PID      int
	Mappings []Mapping
	Pages    NodePages // base pages per node, all mappings
	// BasePageKB is the unit of Pages, in KiB.
	BasePageKB uint64
}

// readFile reads /proc/PID/name; a vanished process is ErrNoProcess.
func (r Reader) readFile(pid int, name string) (string, error) {
	path := filepath.Join(r.root(), strconv.Itoa(pid), name)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return "", fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Process reads /proc/PID/numa_maps. A kernel thread or a zombie has no
// mappings and so no pages.
func (r Reader) Process(pid int) (ProcessMemory, error) {
	text, err := r.readFile(pid, "numa_maps")
	if err != nil {
		return ProcessMemory{}, err
	}
	maps, err := ParseNumaMaps(text)
	if err != nil {
		return ProcessMemory{}, fmt.Errorf("%s: %w", filepath.Join(r.root(), strconv.Itoa(pid), "numa_maps"), err)
	}
	pm := ProcessMemory{PID: pid, Mappings: maps, Pages: NodePages{}, BasePageKB: r.basePageKB()}
	for _, m := range maps {
		pm.Pages.Add(m.BasePages(r.basePageKB()))
	}
	return pm, nil
}

// Processes reads every pid; processes that exited meanwhile are listed in
// gone rather than failing the whole read. Thread ids are folded into their
// process (thread group) and each process is read once, since its threads
// share its memory.
func (r Reader) Processes(pids []int) (mems []ProcessMemory, gone []int, err error) {
	seen := map[int]bool{}
	for _, pid := range pids {
		tgid, err := r.TGID(pid)
		if errors.Is(err, ErrNoProcess) {
			gone = append(gone, pid)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		if seen[tgid] {
			continue
		}
		seen[tgid] = true
		pm, err := r.Process(tgid)
		if errors.Is(err, ErrNoProcess) {
			gone = append(gone, tgid)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		mems = append(mems, pm)
	}
	return mems, gone, nil
}

// TGID is the process (thread group) a thread id belongs to.
func (r Reader) TGID(pid int) (int, error) {
	text, err := r.readFile(pid, "status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no Tgid line", filepath.Join(r.root(), strconv.Itoa(pid), "status"))
}

// CPUsAllowed reads the CPUs pid may run on (Cpus_allowed_list).
func (r Reader) CPUsAllowed(pid int) (cpuset.CPUSet, error) {
	text, err := r.readFile(pid, "status")
	if err != nil {
		return cpuset.New(), err
	}
	set, err := ParseCPUsAllowed(text)
	if err != nil {
		return cpuset.New(), fmt.Errorf("%s: %w", filepath.Join(r.root(), strconv.Itoa(pid), "status"), err)
	}
	return set, nil
}

// Sum adds up the pages of several processes.
func Sum(mems []ProcessMemory) NodePages {
	out := NodePages{}
	for _, pm := range mems {
		out.Add(pm.Pages)
	}
	return out
}

// Summary condenses a process for the planner: its pages, and those held
// on their nodes by a memory policy (see MemPolicy.Holds).
func (pm ProcessMemory) Summary(local []int) ProcessPages {
	s := ProcessPages{PID: pm.PID, Pages: pm.Pages, Held: NodePages{}}
	for _, m := range pm.Mappings {
		if m.Policy.Holds(local) && len(m.Nodes) > 0 {
			s.Held.Add(m.BasePages(pm.BasePageKB))
			if s.HeldBy == "" {
				s.HeldBy = m.Policy.String()
			}
		}
	}
	return s
}
