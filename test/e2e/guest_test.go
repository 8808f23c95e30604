package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// The node inside a QEMU guest (hack/e2e-guest.sh): the guest's init runs this
// binary with LOCUS_E2E_UP=1. It brings the node up with the same
// hack/e2e-up.sh as on the host, then runs itself again inside the node's
// network namespace, where the apiserver listens, as hack/e2e.sh's go test
// -exec does. The guest powers off afterwards, so nothing is taken down.
func upAndRun() int {
	repo := os.Getenv("LOCUS_E2E_REPO")
	if repo == "" {
		fmt.Fprintln(os.Stderr, "e2e: LOCUS_E2E_UP=1 needs LOCUS_E2E_REPO, the repository's files in the guest")
		return 1
	}
	up := exec.Command("bash", filepath.Join(repo, "hack/e2e-up.sh"))
	up.Stdout, up.Stderr = os.Stdout, os.Stderr
	if err := up.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: hack/e2e-up.sh: %v\n", err)
		guestLogs()
		return 1
	}
	run := exec.Command("nsenter", append([]string{"--net=/run/netns/locus-e2e", "--", os.Args[0]}, os.Args[1:]...)...)
	run.Env = append(os.Environ(), "LOCUS_E2E_UP=0")
	run.Stdout, run.Stderr = os.Stdout, os.Stderr
	err := run.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		// The node's logs leave the guest only on its console.
		guestLogs()
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
}

// guestLogs prints the end of every component's log.
func guestLogs() {
	dir := os.Getenv("LOCUS_E2E_DIR")
	if dir == "" {
		dir = "/tmp/locus-e2e"
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
	for _, l := range logs {
		out, _ := exec.Command("tail", "-n", "40", l).Output()
		fmt.Fprintf(os.Stderr, "==== %s (last 40 lines)\n%s", l, out)
	}
}
