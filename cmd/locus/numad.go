package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/pkg/agent"
	"github.com/locus-project/locus/pkg/balancer"
	"github.com/locus-project/locus/pkg/balancer/probe"
	"github.com/locus-project/locus/pkg/numad"
	"github.com/locus-project/locus/pkg/state"
	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology"
)

// numadName is the name libvirt runs numad by: `locus` installed (linked or
// copied) under it answers as numad.
const numadName = "numad"

// invokedAsNumad reports whether argv[0] names numad.
func invokedAsNumad(argv0 string) bool { return filepath.Base(argv0) == numadName }

// numadEnv is where `locus numad` reads the host and the agent.
type numadEnv struct {
	sysfsRoot, procRoot, stateDir string
	// window is how long CPU use is measured: numad measures 2 s too.
	window time.Duration
	// running says whether an agent holds the state directory.
	running func(stateDir string) (bool, error)
}

func hostNumadEnv() numadEnv {
	return numadEnv{sysfsRoot: "/sys", procRoot: "/proc", stateDir: agent.DefaultStateDir,
		window: 2 * time.Second, running: state.Running}
}

// numadMargin is the free memory every node keeps, numad's own 100 MB.
const numadMargin = 100 << 20

func newNumadCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "numad -w NCPUS[:MB]",
		Short: "Answer numad's -w question with Locus's advice, for libvirt's placement='auto'",
		Long: `Answer "numad -w NCPUS[:MB]" as numad does (the node list, such as "0" or
"0-1", on one line; exit 0), with the advice of "locus advise" on the CPUs and
memory the running agent has not pinned. libvirt runs numad for a domain with
<vcpu placement='auto'> or <numatune><memory placement='auto'/>: link locus as
numad (ln -s /usr/local/bin/locus /usr/bin/numad) and libvirt asks Locus.

When nothing fits, every node is answered, as numad does. A malformed -w value
exits 1 with numad's message; numad's daemon options are not supported (exit
1): the locus agent is the daemon. -h prints the options, -V the version.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			code := runNumad("locus numad", args, hostNumadEnv(), cmd.OutOrStdout(), cmd.ErrOrStderr())
			if code != 0 {
				return quietExit{code}
			}
			return nil
		},
	}
}

// runNumad answers numad's command line args, printing as numad prints,
// and returns the exit status.
func runNumad(prog string, args []string, env numadEnv, stdout, stderr io.Writer) int {
	inv := numad.Parse(prog, args)
	fmt.Fprint(stdout, inv.Stdout)
	fmt.Fprint(stderr, inv.Stderr)
	if inv.Query == nil {
		return inv.Exit
	}
	answer, err := numadAnswer(*inv.Query, env)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog, err)
		return 1
	}
	fmt.Fprintln(stdout, answer)
	return 0
}

// numadAnswer is the advice on the machine less what the agent pinned.
func numadAnswer(q numad.Query, env numadEnv) (string, error) {
	topo, err := topology.Discover(env.sysfsRoot)
	if err != nil {
		return "", err
	}
	pinned, err := agentPinned(env)
	if err != nil {
		return "", err
	}
	r := probe.Reader{ProcRoot: env.procRoot, SysfsRoot: env.sysfsRoot}
	parts := balancer.Partitions(topo, balancer.ByNUMA, numad.Pool(topo, pinned))
	in, err := measureAdvice(r, topo, parts, env.window)
	if err != nil {
		return "", err
	}
	in.Memory = numad.Available(in.Memory, pinned.Memory)
	in.MemMargin = numadMargin
	adv := balancer.Advise(in, balancer.Request{CPUs: q.CPUs(), Memory: q.Bytes()})
	return numad.Answer(adv, memoryNodes(topo)), nil
}

// agentPinned is what the running agent holds, from its status as `locus
// status` reads it; nothing when no agent runs (its last status, if any,
// pins nothing now) or when it has not written one yet.
func agentPinned(env numadEnv) (numad.Pinned, error) {
	none := numad.Pinned{}
	running, err := env.running(env.stateDir)
	if err != nil {
		return none, fmt.Errorf("is the agent running? %w", err)
	}
	if !running {
		return none, nil
	}
	st, err := status.Read(env.stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return none, nil
	}
	if err != nil {
		return none, fmt.Errorf("reading the running agent's status in %s: %w", env.stateDir, err)
	}
	return numad.PinnedOf(st)
}

// quietExit is an exit status whose message has been printed already.
type quietExit struct{ code int }

func (e quietExit) Error() string { return fmt.Sprintf("exit status %d", e.code) }
