package agent

import (
	"log/slog"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/kubelet"
	"github.com/locus-project/locus/pkg/workload"
)

// kubeletReader keeps what was last read of the kubelet's files, and reads
// them again only when one of them changed (a restarted kubelet, a policy
// changed after a drain, a pod pinned or let go).
type kubeletReader struct {
	stamp    string
	read     bool
	state    kubelet.State
	observed decide.Kubelet
	problems []workload.Problem // the files that could not be read, for the node
}

func (k *kubeletReader) refresh(p kubelet.Paths, log *slog.Logger) {
	if p.Dir == "" {
		return
	}
	stamp := kubelet.Stamp(p)
	if k.read && stamp == k.stamp {
		return
	}
	k.stamp, k.read = stamp, true
	k.state = kubelet.Read(p)
	k.observed, k.problems = fromKubelet(k.state)
	sum := k.state.Summary()
	log.Info("kubelet read", "cpuManagerPolicy", sum.CPUManagerPolicy, "exclusiveCPUs", sum.ExclusiveCPUs,
		"reservedSystemCPUs", sum.ReservedCPUs, "topologyManagerPolicy", sum.TopologyManagerPolicy, "errors", len(sum.Errors))
}

// fromKubelet is what the decision needs of the kubelet's state. An
// unreadable CPU manager checkpoint is told by the decision itself
// (KubeletCheckpointUnreadable); the other files are told here.
func fromKubelet(s kubelet.State) (decide.Kubelet, []workload.Problem) {
	out := decide.Kubelet{Reserved: s.Reserved(), Unnamed: cpuset.New()}
	var problems []workload.Problem
	for _, e := range s.Errors {
		if s.CPUUnknown && out.Unknown == "" {
			out.Unknown = e.String()
			continue
		}
		problems = append(problems, workload.Problem{Reason: "KubeletFileUnreadable", Message: e.String() + "; Locus goes on without it"})
	}
	if c := s.CPU; c != nil {
		out.Policy, out.Pinned = c.Policy, c.Assignments
		for _, set := range c.ByContainerID {
			out.Unnamed = out.Unnamed.Union(set)
		}
	}
	return out, problems
}
