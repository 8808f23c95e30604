// Command locus-scheduler is kube-scheduler with Locus's topology-aware CPU
// plugin (LocusCPUTopology) registered: it takes kube-scheduler's flags and
// a KubeSchedulerConfiguration (--config) that enables the plugin, and for
// pods with cpuset-scheduler "true" chooses the node and the exact CPUs
// together. See docs/scheduler.md.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/locus-project/locus/pkg/scheduler/plugin"
)

func main() {
	os.Exit(cli.Run(plugin.Command()))
}
