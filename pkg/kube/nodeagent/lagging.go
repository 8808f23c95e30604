package nodeagent

import (
	"time"

	"github.com/locus-project/locus/pkg/kube/podplan"
	"github.com/locus-project/locus/pkg/workload"
)

// containerGrace is how long a container the kubelet reports running may
// lack its cgroup before the agent says so. A container that exits loses
// its cgroup at once, but the kubelet notices on its next relist (about a
// second) and the status update follows; a missing cgroup that outlives
// that is a real problem (a runtime naming its cgroups unlike the ones
// Locus knows).
const containerGrace = 30 * time.Second

// laggingContainers holds back ContainerCgroupNotFound problems until they
// have lasted containerGrace. It remembers only the problems of the last
// snapshot, so it never grows beyond the containers running now.
type laggingContainers struct {
	since map[string]time.Time // by workload and message: first seen
}

// lagPass is one snapshot's pass over the problems.
type lagPass struct {
	now  time.Time
	prev map[string]time.Time
	seen map[string]time.Time
}

func (l *laggingContainers) begin(now time.Time) *lagPass {
	return &lagPass{now: now, prev: l.since, seen: map[string]time.Time{}}
}

// filter drops the ContainerCgroupNotFound problems younger than the grace.
func (p *lagPass) filter(probs []workload.Problem) []workload.Problem {
	var out []workload.Problem
	for _, pr := range probs {
		if pr.Reason == podplan.ReasonContainerCgroupNotFound {
			key := pr.Workload + "\x00" + pr.Message
			first, ok := p.prev[key]
			if !ok {
				first = p.now
			}
			p.seen[key] = first
			if p.now.Sub(first) < containerGrace {
				continue
			}
		}
		out = append(out, pr)
	}
	return out
}

// end keeps what this pass saw; what it did not see is forgotten.
func (l *laggingContainers) end(p *lagPass) { l.since = p.seen }
