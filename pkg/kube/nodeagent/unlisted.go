package nodeagent

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/cgwatch"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/eventlog"
	"github.com/locus-project/locus/pkg/kube/podcgroup"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/status"
)

// ReasonCgroupWatchUnavailable is the Node's Warning when some pod's cgroup
// is not watched: its new containers wait for the pod's status.
const ReasonCgroupWatchUnavailable = "CgroupWatchUnavailable"

// addUnlisted gives each running pod the container cgroups found under its
// cgroup that its status does not list yet (workload.Workload.Unlisted): the
// kubelet reports a started container late when it starts many pods at
// once, while the container's cgroup is there as it starts. The pods' and
// the QoS tiers' directories are watched (cgwatch), so a container or a pod
// cgroup appearing wakes the reconcile loop, and a pod's directory is listed
// again only after something changed in it. Every directory is resolved
// through the agent's cgroup hierarchy from the pod's own cgroup; only names
// read as a runtime's container directory (podcgroup.ContainerDir) count.
// Without the watch (inotify unavailable, a limit reached) a pod gets none:
// its containers are known from its status only, as without this. On
// cgroup v1 a container whose cpuset the runtime has not filled yet
// (cgroup.Hierarchy.CPUSetFilled) is not listed: the runtime's copy would undo the
// reconcile's write; the early path writes it once filled.
func (s *Source) addUnlisted(env source.Env, ws []source.Workload) {
	if env.Cgroups != s.cgroups && env.Cgroups != nil && s.cgw != nil {
		// The watch vouches for the identities of the pods' and their
		// containers' directories from one reconcile to the next, so that
		// those unchanged are not looked at again (cgroup.Witness).
		env.Cgroups.SetWitness(s.cgw.Generation)
	}
	s.cgroups, s.earlyw = env.Cgroups, env.Early // the decision's pods' directories are resolved through the one, written by the other
	if s.cgw == nil || env.Cgroups == nil {
		return
	}
	keep, settled := map[string]bool{}, map[string]bool{}
	podDirs := make(map[string]string, len(ws))
	for _, rel := range podcgroup.QoSParents(s.driver) {
		if dir, err := env.Cgroups.Dir(cgroup.CPUSet, s.opts.KubeletCgroupRoot.Path(rel)); err == nil && s.cgw.Parent(dir) {
			keep[dir] = true
		}
	}
	for i := range ws {
		p := &ws[i].Plan
		if p.Terminating {
			continue
		}
		dir, known := s.podDirs[p.Cgroup] // resolved at the last reconcile
		if exists, sure := s.cgw.Exists(dir); !known || !exists || !sure {
			var err error
			if dir, err = env.Cgroups.Dir(cgroup.CPUSet, p.Cgroup); err != nil {
				continue
			}
		}
		names, ok := s.cgw.Children(dir)
		if !ok {
			continue
		}
		keep[dir], podDirs[p.Cgroup] = true, dir
		listed := make(map[string]bool, len(p.Containers))
		for _, c := range p.Containers {
			listed[c.Cgroup] = true
		}
		var unlisted []string
		for _, n := range names {
			cg := p.Cgroup + "/" + n
			if listed[cg] {
				continue
			}
			if _, ok := podcgroup.ContainerDir(s.driver, n); !ok {
				continue
			}
			if !s.settled[cg] && !env.Cgroups.CPUSetFilled(cg) {
				// Being made by the runtime, which is about to copy its
				// parent's cpuset into it over any write: the early path
				// writes it once it has.
				s.early.Created(dir, n)
				continue
			}
			settled[cg] = true
			p.Unlisted = append(p.Unlisted, cg)
			unlisted = append(unlisted, n)
		}
		s.early.Listed(dir, unlisted)
	}
	s.settled, s.podDirs = settled, podDirs
	s.cgw.Retain(func(dir string) bool { return keep[dir] })
	if pr := s.cgw.Problem(); pr != "" && !s.cgwTold {
		s.cgwTold = true
		s.events.post(eventlog.Event{Type: corev1.EventTypeWarning, Reason: ReasonCgroupWatchUnavailable,
			Message: fmt.Sprintf("%s; the containers of the pods not watched are pinned once the pod's status lists them", pr)})
	}
}

// newCgroupWatch is the source's watch of the pods' cgroups: it wakes the
// reconcile loop, and a container appearing in a decided pod's directory
// is given the pod's cpuset at once (earlypin). A pod decided before the
// kubelet made its cgroup (workload.Workload.Awaited) has its directory
// watched as soon as it appears.
func (s *Source) newCgroupWatch() *cgwatch.Watch {
	return cgwatch.New(cgwatch.Options{Wake: s.poke, Created: s.early.Created, Adopt: s.early.Awaits, Log: s.log})
}

// CgroupWatch implements source.Watcher: the directories watched, why some
// are not, and the containers given their cpuset as their cgroup appeared.
func (s *Source) CgroupWatch() status.CgroupWatch {
	cw := status.CgroupWatch{EarlyWrites: s.early.Written(), Problem: "not started"}
	if s.cgw != nil {
		cw.Watched, cw.Problem = s.cgw.Watched(), s.cgw.Problem()
	}
	return cw
}

// PodCPUSet implements source.PodCPUSets: the cpuset the last decision gave
// the pod's new containers, found by the pod's UID.
func (s *Source) PodCPUSet(ref source.PodRef) (decide.PodCPUSet, bool) {
	return s.early.PodCPUSet(s.opts.KubeletCgroupRoot, ref.UID)
}
