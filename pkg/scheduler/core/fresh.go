package core

import "time"

// Fresh says whether a node's report is recent enough to place pods on:
// the agent rewrites its heartbeat at least every minute (by default), so
// a report older than maxAge means the agent stopped (crashed, or cut off
// from the apiserver) and CPUs chosen there would not be applied. A
// report without a heartbeat, a view that is unusable anyway, or a
// maxAge of 0 pass.
func Fresh(v *NodeView, now time.Time, maxAge time.Duration) error {
	if v == nil || v.Err != nil || maxAge <= 0 || v.Heartbeat.IsZero() {
		return nil
	}
	if age := now.Sub(v.Heartbeat); age > maxAge {
		return unfit(Silent, "its locus agent last wrote its NodeResourceTopology %s ago (at %s), more than nrtMaxAge %s",
			age.Round(time.Second), v.Heartbeat.Format(time.RFC3339), maxAge)
	}
	return nil
}

// Heartbeat is when the node's agent last wrote its report, zero when
// there is none or it does not say.
func (c *Cluster) Heartbeat(node string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.reports[node]; r != nil {
		return r.heartbeat
	}
	return time.Time{}
}
