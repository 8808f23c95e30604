package doctor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locus-project/locus/pkg/topology"
)

// capSysNice is CAP_SYS_NICE's bit in CapEff: moving the pages of another
// user's process (move_pages, migrate_pages with MPOL_MF_MOVE_ALL) needs it.
const capSysNice = 23

func init() {
	register(Check{Name: "page-migration-permission", Order: 170, Run: checkPrivilege})
}

func checkPrivilege(env Env) Result {
	path := env.proc("self/status")
	s, err := readText(path, maxAttr)
	if err != nil {
		return unreadable(Warn, err, "cannot tell whether this process may move other processes' pages")
	}
	st, err := parseProcStatus(s)
	if err != nil {
		return unreadable(Warn, &readErr{path: path, reason: err.Error()}, "cannot tell whether this process may move other processes' pages")
	}
	who := fmt.Sprintf("uid %d", st.euid)
	if st.euid == 0 {
		who = "root"
	}
	if st.capEff&(1<<capSysNice) != 0 {
		return Result{Status: OK, Found: "running as " + who + " with CAP_SYS_NICE: memory locality may move any workload's pages"}
	}
	return Result{Status: Warn, Found: "running as " + who + " without CAP_SYS_NICE: moving the pages of other users' processes fails with EPERM",
		Do: "run the agent as root, or give it CAP_SYS_NICE (the Helm chart's agent has it, and CAP_SYS_PTRACE); without it memory locality runs only on this user's processes"}
}

type procStatus struct {
	euid   int64
	capEff uint64
}

// parseProcStatus reads the effective uid and capabilities from
// /proc/PID/status ("Uid:\treal\teffective\t...", "CapEff:\t<hex>").
func parseProcStatus(s string) (procStatus, error) {
	var st procStatus
	var haveUID, haveCap bool
	for line := range strings.SplitSeq(s, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		switch key {
		case "Uid":
			if len(f) < 2 {
				return st, fmt.Errorf("line Uid: %s: want real and effective uid", topology.Quote(val))
			}
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || n < 0 || n > 1<<32-1 {
				return st, fmt.Errorf("line Uid: %s: effective uid is not a uid", topology.Quote(val))
			}
			st.euid, haveUID = n, true
		case "CapEff":
			if len(f) != 1 {
				return st, fmt.Errorf("line CapEff: %s: want one hex mask", topology.Quote(val))
			}
			n, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				return st, fmt.Errorf("line CapEff: %s: not a hex mask", topology.Quote(val))
			}
			st.capEff, haveCap = n, true
		}
	}
	if !haveUID || !haveCap {
		return st, fmt.Errorf("no Uid or CapEff line")
	}
	return st, nil
}
