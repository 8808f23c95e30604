package execute

import (
	"errors"
	"hash/fnv"
	"io/fs"
	"sync"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
)

// With Config.Recheck set, a file the executor found holding, or made hold,
// the value a decision asks for is trusted to hold it until a time between
// Recheck/2 and Recheck later, and not read again before; a decision asking
// for another value is carried out at once. The agent sets it in Kubernetes
// mode, where a cgroup's path (its pod's UID, its container's ID) is never
// reused, so a remembered file cannot be a new cgroup's. Someone else's
// change to a file (drift) is repaired once its time is up: within Recheck,
// as a periodic resync would. The times are spread by the file's name, so
// that the re-reads of a node's pods fall across reconciles instead of all
// into one. The files the status reads besides are remembered the same way.

// confirmation is what a file was last seen to hold for a decided value,
// or that the kernel has no such file (absent).
type confirmation struct {
	want, text string
	absent     bool
	due        time.Time
}

// dueAfter is when a file confirmed at now is read again.
func (e *Executor) dueAfter(now time.Time, cg string, k cgroup.Knob) time.Time {
	h := fnv.New64a()
	h.Write([]byte(cg))
	h.Write([]byte{0})
	h.Write([]byte(k))
	half := e.c.Recheck / 2
	return now.Add(half + time.Duration(h.Sum64()%uint64(half+1)))
}

func (e *Executor) rechecking() bool { return e.c.Pods && e.c.Recheck > 0 && !e.c.DryRun }

// skipConfirmed returns the ops still to carry out, and puts what the files
// of the others hold into seen.
func (e *Executor) skipConfirmed(ops []cgroup.Op, now time.Time, seen ReadBack) []cgroup.Op {
	if !e.rechecking() {
		return ops
	}
	out := ops[:0:0]
	for _, op := range ops {
		c, ok := e.confirmed[op.Cgroup][op.Knob]
		if !ok || c.want != op.Value || !now.Before(c.due) {
			out = append(out, op)
			continue
		}
		if seen[op.Cgroup] == nil {
			seen[op.Cgroup] = map[cgroup.Knob]FileState{}
		}
		seen[op.Cgroup][op.Knob] = FileState{c.text, !c.absent}
	}
	return out
}

// confirm remembers the files the writer found holding, or wrote verbatim,
// the value their op asked for, and those the kernel lacks (unsupported
// knobs stay so); it forgets the others and every cgroup no op names any
// more (all is every op of the decision, skipped or not).
func (e *Executor) confirm(done, all []cgroup.Op, seen ReadBack, now time.Time) {
	if !e.rechecking() {
		return
	}
	names := map[string]bool{}
	for _, op := range all {
		names[op.Cgroup] = true
	}
	for cg := range e.confirmed {
		if !names[cg] {
			delete(e.confirmed, cg)
		}
	}
	for _, op := range done {
		f, ok := seen[op.Cgroup][op.Knob]
		if !ok {
			delete(e.confirmed[op.Cgroup], op.Knob)
			continue
		}
		if e.confirmed[op.Cgroup] == nil {
			e.confirmed[op.Cgroup] = map[cgroup.Knob]confirmation{}
		}
		e.confirmed[op.Cgroup][op.Knob] = confirmation{want: op.Value, text: f.Text, absent: !f.Present,
			due: e.dueAfter(now, op.Cgroup, op.Knob)}
	}
}

// readCache remembers the files the status reads that no decision writes,
// and the cgroups' processes, under the same rule. Build reads on several
// goroutines, hence the lock.
type readCache struct {
	mu    sync.Mutex
	files map[string]map[string]cachedRead // cgroup to knob (or cgroup.procs) to what was read
}

type cachedRead struct {
	text string
	pids []int
	err  error
	due  time.Time
}

func (c *readCache) get(cg, what string, now time.Time) (cachedRead, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.files[cg][what]
	return r, ok && now.Before(r.due)
}

func (c *readCache) put(cg, what string, r cachedRead) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.files == nil {
		c.files = map[string]map[string]cachedRead{}
	}
	if c.files[cg] == nil {
		c.files[cg] = map[string]cachedRead{}
	}
	c.files[cg][what] = r
}

// prune forgets the cgroups of no workload (keep maps a workload's cgroups
// and its containers' to it). A pod's own cgroup often has no op, but the
// status reads it on every reconcile.
func (c *readCache) prune(keep map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for cg := range c.files {
		if _, ok := keep[cg]; !ok {
			delete(c.files, cg)
		}
	}
}

// cachedKnob reads a knob through the cache when rechecking.
func (r Reader) cachedKnob(rel string, k cgroup.Knob) (string, error) {
	e := r.e
	if e == nil || !e.rechecking() {
		return r.h.ReadKnob(rel, k)
	}
	now := e.c.Now()
	if c, ok := e.reads.get(rel, string(k), now); ok {
		return c.text, c.err
	}
	text, err := r.h.ReadKnob(rel, k)
	if err == nil || isAbsent(err) {
		e.reads.put(rel, string(k), cachedRead{text: text, err: err, due: e.dueAfter(now, rel, k)})
	}
	return text, err
}

// cachedProcs reads a cgroup's processes through the cache when rechecking.
func (r Reader) cachedProcs(rel string) ([]int, error) {
	e := r.e
	if e == nil || !e.rechecking() {
		return r.h.Procs(rel)
	}
	now := e.c.Now()
	if c, ok := e.reads.get(rel, "cgroup.procs", now); ok {
		return c.pids, c.err
	}
	pids, err := r.h.Procs(rel)
	if err == nil {
		e.reads.put(rel, "cgroup.procs", cachedRead{pids: pids, due: e.dueAfter(now, rel, "cgroup.procs")})
	}
	return pids, err
}

// isAbsent: the file is not there (the kernel lacks it), which stays so.
func isAbsent(err error) bool {
	return err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, cgroup.ErrUnsupported))
}
