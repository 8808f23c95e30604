package agent

import "github.com/locus-project/locus/pkg/server"

// serve starts the HTTP server on addr ("" serves nothing), reading the
// agent's last status, metrics and health, and nothing else of it.
func (a *Agent) serve(addr string) (*server.Server, error) {
	return server.Start(server.Config{Addr: addr, Metrics: a.metrics.reg, NodeCPUs: a.metrics.nodeCPUs,
		Health: a.health, Status: a.lastStatus, ConfigName: a.configName,
		SysfsRoot: a.opts.SysfsRoot, ProcRoot: a.opts.ProcRoot, TopologyFiles: topologyFiles, Hierarchy: a.h, Log: a.log})
}

// lastStatus is the status of the last reconcile, for the server.
func (a *Agent) lastStatus() Status {
	a.statusMu.Lock()
	defer a.statusMu.Unlock()
	return a.status
}
