package agent

import (
	"github.com/locus-project/locus/pkg/server"
	"github.com/locus-project/locus/pkg/topology"
)

// serve starts the HTTP server on addr ("" serves nothing) and the status
// address, reading the agent's last status, metrics and health, and
// nothing else of it.
func (a *Agent) serve(addr string) (*server.Server, error) {
	return server.Start(server.Config{Addr: addr, StatusAddr: a.opts.StatusAddr, Metrics: a.metrics.Reg, NodeCPUs: a.metrics.NodeCPUs,
		Health: a.health, Status: a.pub.Current, ConfigName: a.configName, Profiling: a.opts.Profiling,
		SysfsRoot: a.opts.SysfsRoot, ProcRoot: a.opts.ProcRoot, TopologyFiles: topology.ChangeFiles, Hierarchy: a.h, Log: a.log})
}
