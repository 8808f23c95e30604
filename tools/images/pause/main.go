// Command pause is the sandbox ("pause") container of the end-to-end node: PID 1 of
// each pod's sandbox, it holds the pod's namespaces, reaps orphans and exits on
// SIGTERM or SIGINT. Built static, it is the whole of locus.local/e2e/pause.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		// As PID 1 it inherits orphans; wait for every exited one.
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
