package libvirt

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// procStat is one line of /proc/PID/stat: the command name between its
// parentheses (which may hold spaces and parentheses itself, hence the
// last ')') and the fields after it, rest[0] being the state.
type procStat struct {
	pid  int
	comm string
	rest []string
}

// processStats reads /proc/*/stat, skipping processes that exit meanwhile
// or whose line does not parse.
func processStats() []procStat {
	var out []procStat
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		out = append(out, procStat{pid: pid, comm: s[open+1 : closing], rest: strings.Fields(s[closing+1:])})
	}
	return out
}

// TestProcessStatsReadsThisProcess runs anywhere (the guest's tests run
// only there): the reader must find this test binary, running, with its
// parent's pid where exitedQEMUs looks for it.
func TestProcessStatsReadsThisProcess(t *testing.T) {
	for _, p := range processStats() {
		if p.pid != os.Getpid() {
			continue
		}
		// The kernel keeps 15 bytes of the name; the guest's binaries are
		// named after their package's whole path.
		comm := filepath.Base(os.Args[0])
		comm = comm[:min(len(comm), 15)]
		if len(p.rest) < 13 || p.rest[1] != strconv.Itoa(os.Getppid()) || p.comm != comm {
			t.Fatalf("this process read as %+v; want comm %q, ppid %d, 13 fields or more", p, comm, os.Getppid())
		}
		return
	}
	t.Fatalf("pid %d not among /proc's processes", os.Getpid())
}
