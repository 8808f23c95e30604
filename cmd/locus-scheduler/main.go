// Command locus-scheduler is kube-scheduler with Locus's topology-aware CPU
// plugin (LocusCPUTopology) registered: it takes kube-scheduler's flags and
// a KubeSchedulerConfiguration (--config) that enables the plugin, and for
// pods with cpuset-scheduler "true" chooses the node and the exact CPUs
// together. See docs/scheduler.md.
package main

import (
	"fmt"
	"os"

	"k8s.io/component-base/cli"

	"github.com/locus-project/locus/cmd/internal/buildinfo"
	"github.com/locus-project/locus/pkg/scheduler/plugin"
)

func main() {
	if versionRequested(os.Args[1:]) {
		fmt.Println(versionLine())
		return
	}
	os.Exit(cli.Run(plugin.Command()))
}

// versionRequested: --version (or --version=true), which kube-scheduler would
// answer with the Kubernetes version alone; --version=raw still reaches it.
func versionRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--version", "-version", "--version=true", "-version=true":
			return true
		}
	}
	return false
}

// versionLine is Locus's version line, and the kube-scheduler it is built from.
func versionLine() string {
	line := buildinfo.Get().String("locus-scheduler")
	if v := buildinfo.ModuleVersion("k8s.io/kubernetes"); v != "" {
		line += ", kube-scheduler " + v
	}
	return line
}
