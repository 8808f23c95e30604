package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/execute"
)

// ShimCommand is the hidden subcommand that starts a command workload: the
// agent runs `locus __exec-in-cgroup ROOT VERSION CGROUP ARGV...`, the shim
// moves itself into the workload's cgroup (every managed v1 hierarchy, or the
// v2 cgroup) and only then execs the command. So the command never runs a
// single instruction outside its cgroup, on v1 and v2 alike, and keeps the
// shim's pid, which the agent recorded.
const ShimCommand = "__exec-in-cgroup"

// shimArgs builds the shim's arguments for a command workload.
func shimArgs(h *cgroup.Hierarchy, rel string, argv []string) []string {
	return append([]string{ShimCommand, h.Root(), h.Version().String(), rel}, argv...)
}

// ExecInCgroup is the shim's body; args are ROOT VERSION CGROUP ARGV... It
// returns only on failure.
func ExecInCgroup(args []string) error {
	if len(args) < 4 {
		return errors.New(ShimCommand + ": want ROOT VERSION CGROUP COMMAND [ARG...]")
	}
	v, err := cgroup.ParseVersion(args[1])
	if err != nil {
		return err
	}
	h, err := cgroup.Open(args[0], v)
	if err != nil {
		return err
	}
	// Moving a process is no file change to undo: no originals are kept.
	c, err := execute.NewCgroups(h, cgroup.NewMemoryStore())
	if err != nil {
		return err
	}
	if _, err := c.Join(args[2], os.Getpid()); err != nil {
		return fmt.Errorf("join cgroup %s: %w", args[2], err)
	}
	path, err := exec.LookPath(args[3])
	if err != nil {
		return err
	}
	return unix.Exec(path, args[3:], os.Environ())
}
