package kubelet

import "log/slog"

// Reader keeps what was last read of the kubelet's files, and reads them
// again only when one of them changed (a restarted kubelet, a policy
// changed after a drain, a pod pinned or let go). The zero value has read
// nothing.
type Reader struct {
	stamp string
	read  bool
	state State
}

// Refresh reads the files at p again when one of them changed since the
// last read, and logs what it read; with no Dir it reads nothing.
func (r *Reader) Refresh(p Paths, log *slog.Logger) {
	if p.Dir == "" {
		return
	}
	stamp := Stamp(p)
	if r.read && stamp == r.stamp {
		return
	}
	r.stamp, r.read = stamp, true
	r.state = Read(p)
	sum := r.state.Summary()
	log.Info("kubelet read", "cpuManagerPolicy", sum.CPUManagerPolicy, "exclusiveCPUs", sum.ExclusiveCPUs,
		"reservedSystemCPUs", sum.ReservedCPUs, "topologyManagerPolicy", sum.TopologyManagerPolicy, "errors", len(sum.Errors))
}

// State is what was last read, and whether anything was.
func (r *Reader) State() (State, bool) { return r.state, r.read }
