package nodeagent

import "github.com/locus-project/locus/pkg/workload"

// trust is what a pod's decision is believed by: this node's name and the
// scheduler's keys as last read, a new key file logged once.
func (s *Source) trust() workload.Trust {
	t := workload.Trust{Node: s.opts.NodeName}
	if s.keys == nil {
		return t
	}
	keys, changed, err := s.keys.Keys()
	switch {
	case changed && err != nil:
		s.log.Warn("cannot read the decision keys; keeping those read before", "err", err, "keys", keys.IDs())
	case changed:
		s.log.Info("decision keys read", "file", s.keys.Path(), "keys", keys.IDs())
	}
	t.Keys = keys
	return t
}
