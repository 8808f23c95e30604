package earlypin

import (
	"errors"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/cgroupfile"
)

// On cgroup v1 a new cpuset cgroup is made with empty cpuset.cpus and
// cpuset.mems, and the runtime (runc, crun) reads them and, finding them
// empty, writes its parent's into them just after: a write of Locus's that
// lands between that read and that write is overwritten, and the container
// starts on its pod's CPUs. Seen as the cgroup appears, a container is
// therefore written once the runtime has filled both files, from a
// goroutine of its own (at most MaxSettling at once; past that, at once),
// waiting at most SettleWait.
const (
	MaxSettling = 256
	SettleWait  = 2 * time.Second
)

// Written is how many container cgroups were given their cpuset here.
func (p *Pinner) Written() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.written
}

// write applies ops, cpuset.mems then cpuset.cpus of each container; one
// whose cgroup the runtime has not given its cpuset yet (settled) is
// written once it has, from a goroutine of its own.
func (p *Pinner) write(ops []cgroupfile.Op) {
	if len(ops) == 0 {
		return
	}
	p.mu.Lock()
	w, h := p.w, p.h
	p.mu.Unlock()
	for i := 0; i+1 < len(ops); i += 2 {
		pair := ops[i : i+2]
		if !settled(h, pair[0].Cgroup) {
			if p.settling.Add(1) <= MaxSettling {
				go func() {
					defer p.settling.Add(-1)
					awaitSettled(h, pair[0].Cgroup)
					p.apply(w, pair)
				}()
				continue
			}
			p.settling.Add(-1)
		}
		p.apply(w, pair)
	}
}

// apply writes one container's cpuset.mems and cpuset.cpus. A container
// gone already is no error: its cgroup went with it.
func (p *Pinner) apply(w Writer, ops []cgroupfile.Op) {
	for i := 0; i+1 < len(ops); i += 2 {
		err := w.Apply(ops[i : i+2])
		switch {
		case err == nil:
			p.mu.Lock()
			p.written++
			p.mu.Unlock()
			p.log.Debug("new container given its pod's cpuset", "cgroup", ops[i].Cgroup, "cpus", ops[i+1].Value)
		case errors.Is(err, cgroup.ErrCgroupGone):
		default:
			p.log.Warn("new container waits for the reconcile", "cgroup", ops[i].Cgroup, "err", err)
		}
	}
}

// awaitSettled polls rel until it is settled or SettleWait has passed: the
// runtime fills the files microseconds after making the cgroup, later
// only when it is descheduled in between on a loaded node.
func awaitSettled(h *cgroup.Hierarchy, rel string) {
	step := 500 * time.Microsecond
	for deadline := time.Now().Add(SettleWait); !settled(h, rel) && time.Now().Before(deadline); {
		time.Sleep(step)
		step = min(2*step, 20*time.Millisecond)
	}
}

// settled is h.CPUSetFilled, true without a hierarchy.
func settled(h *cgroup.Hierarchy, rel string) bool { return h == nil || h.CPUSetFilled(rel) }
