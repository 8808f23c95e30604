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
// for another value is carried out at once. A file is trusted only while the
// cgroup directory holding it is the one it was confirmed in (cgroup.DirID,
// looked at once per reconcile): a cgroup removed and created again at the
// same path, as a HostConfig's may be, is a new directory whose files are
// read and written at once. Someone else's change to a file (drift) is
// repaired once its time is up: within Recheck, as a periodic resync would.
// The times are spread by the file's name, so that the re-reads of a host's
// workloads fall across reconciles instead of all into one. The files the
// status reads besides are remembered the same way, for StatusRecheck, and a
// pod's processes for Recheck.

// confirmation is what a file was last seen to hold for a decided value,
// or that the kernel has no such file (absent), in directory dir.
type confirmation struct {
	want, text string
	absent     bool
	dir        cgroup.DirID
	due        time.Time
	// trustedIn is the Apply (Executor.applies) that last skipped the file
	// as trusted: the status reads what such a file holds from here, where
	// each Apply copied every trusted file into a map per cgroup (2.9 % of
	// the bytes the agent allocated under a 300-pod churn).
	trustedIn uint64
}

// dirKey names a cgroup's directory in one controller (v1) or the one
// hierarchy (v2).
type dirKey struct {
	cg   string
	ctrl cgroup.Controller
}

// dirs are the directories an Apply looked at, and which they were.
type dirs map[dirKey]cgroup.DirID

// knobController is the controller whose directory holds a knob's file;
// the cpuset one for a knob the version lacks (its absence is per cgroup
// version, not per directory).
func (e *Executor) knobController(k cgroup.Knob) cgroup.Controller {
	if pl, _ := e.placement(k); pl != nil {
		return pl.Controller
	}
	return cgroup.CPUSet
}

// dirOf is which directory holds cgroup cg's files of controller ctrl now
// (the zero DirID: none), looked at once per reconcile (the hierarchy's
// scope) and once per Apply besides.
func (e *Executor) dirOf(ds dirs, cg string, ctrl cgroup.Controller) cgroup.DirID {
	if e.c.Hierarchy.Version() == cgroup.V2 {
		ctrl = "" // one directory for every controller
	}
	key := dirKey{cg, ctrl}
	id, ok := ds[key]
	if !ok {
		id, _ = e.c.Hierarchy.DirID(ctrl, cg)
		ds[key] = id
	}
	return id
}

// dueAfter is when a file confirmed at now is read again.
func (e *Executor) dueAfter(now time.Time, cg string, k cgroup.Knob) time.Time {
	return spreadDue(now, e.c.Recheck, cg, k)
}

// statusDueAfter is when a file only the status reads, read at now, is read
// again.
func (e *Executor) statusDueAfter(now time.Time, cg string, k cgroup.Knob) time.Time {
	every := e.c.StatusRecheck
	if every <= 0 {
		every = 6 * e.c.Recheck
	}
	return spreadDue(now, every, cg, k)
}

// spreadDue is a time between every/2 and every after now, the same for the
// same file, different across files.
func spreadDue(now time.Time, every time.Duration, cg string, k cgroup.Knob) time.Time {
	h := fnv.New64a()
	h.Write([]byte(cg))
	h.Write([]byte{0})
	h.Write([]byte(k))
	half := every / 2
	return now.Add(half + time.Duration(h.Sum64()%uint64(half+1)))
}

func (e *Executor) rechecking() bool { return e.c.Recheck > 0 && !e.c.DryRun }

// skipConfirmed returns the ops still to carry out, those of files still
// trusted marked with the text they hold (cgroup.Op.Known), and marks the
// others' confirmations as trusted in this Apply (held reads them). It looks
// at the directories of all ops before any is carried out, into ds, so that
// a cgroup recreated after the look is told apart at the next.
func (e *Executor) skipConfirmed(ops []cgroup.Op, now time.Time, ds dirs) []cgroup.Op {
	if !e.rechecking() {
		return ops
	}
	out := e.todo[:0]
	defer func() { e.todo = out[:0] }()
	for _, op := range ops {
		dir := e.dirOf(ds, op.Cgroup, e.knobController(op.Knob))
		c, ok := e.confirmed[op.Cgroup][op.Knob]
		trusted := ok && now.Before(c.due) && c.dir == dir && dir != (cgroup.DirID{})
		if !trusted || c.want != op.Value {
			if trusted && !c.absent {
				// A new value for a file still trusted: what it holds is
				// known, so the writer need not read it first.
				op.Known, op.Holds = true, c.text
			}
			out = append(out, op)
			continue
		}
		c.trustedIn = e.applies
		e.confirmed[op.Cgroup][op.Knob] = c // the key is there: no allocation
	}
	return out
}

// held is what file k of cgroup cg holds after Apply number apply, where it
// is known without reading it: read or written by it (seen), or skipped by
// it as trusted. A confirmation forgotten since (a restore) is not known.
func (e *Executor) held(seen ReadBack, apply uint64, cg string, k cgroup.Knob) (FileState, bool) {
	if f, ok := seen[cg][k]; ok {
		return f, true
	}
	if e == nil || apply == 0 {
		return FileState{}, false
	}
	if c, ok := e.confirmed[cg][k]; ok && c.trustedIn == apply {
		return FileState{c.text, !c.absent}, true
	}
	return FileState{}, false
}

// confirm remembers the files the writer found holding, or wrote verbatim,
// the value their op asked for, and those the kernel lacks (unsupported
// knobs stay so); it forgets the others and every cgroup no op names any
// more (all is every op of the decision, skipped or not).
func (e *Executor) confirm(done, all []cgroup.Op, seen ReadBack, ds dirs, now time.Time) {
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
		dir := e.dirOf(ds, op.Cgroup, e.knobController(op.Knob))
		if !ok || dir == (cgroup.DirID{}) {
			delete(e.confirmed[op.Cgroup], op.Knob)
			continue
		}
		if e.confirmed[op.Cgroup] == nil {
			e.confirmed[op.Cgroup] = map[cgroup.Knob]confirmation{}
		}
		e.confirmed[op.Cgroup][op.Knob] = confirmation{want: op.Value, text: f.Text, absent: !f.Present,
			dir: dir, due: e.dueAfter(now, op.Cgroup, op.Knob)}
	}
}

// forgetRestored forgets the confirmations of the files restored to their
// originals, which no longer hold the value confirmed (a decision setting
// it again must write it), and the status's reads of every file written,
// which the next read takes anew.
func (e *Executor) forgetRestored(restored, written []cgroup.Target) {
	if !e.rechecking() {
		return
	}
	for _, t := range restored {
		delete(e.confirmed[t.Cgroup], t.Knob)
	}
	for _, t := range written {
		e.reads.drop(t.Cgroup, string(t.Knob))
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
	dir  cgroup.DirID // the directory read
	due  time.Time
}

func (c *readCache) get(cg, what string, dir cgroup.DirID, now time.Time) (cachedRead, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.files[cg][what]
	return r, ok && r.dir == dir && dir != (cgroup.DirID{}) && now.Before(r.due)
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

func (c *readCache) drop(cg, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.files[cg], what)
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
	dir, _ := r.h.DirID(e.knobController(k), rel)
	if c, ok := e.reads.get(rel, string(k), dir, now); ok {
		return c.text, c.err
	}
	text, err := r.h.ReadKnob(rel, k)
	if err == nil || isAbsent(err) {
		e.reads.put(rel, string(k), cachedRead{text: text, err: err, dir: dir, due: e.statusDueAfter(now, rel, k)})
	}
	return text, err
}

// cachedProcs reads a pod's processes through the cache when rechecking.
// A HostConfig's workloads' are read every time: their processes are often
// the agent's own to start and restart (command workloads), or to move in
// (match workloads), and the status shows the ones there now.
func (r Reader) cachedProcs(rel string) ([]int, error) {
	e := r.e
	if e == nil || !e.rechecking() || !e.c.Pods {
		return r.h.Procs(rel)
	}
	now := e.c.Now()
	dir, _ := r.h.DirID(cgroup.CPUSet, rel) // the hierarchy processes are read from first
	if c, ok := e.reads.get(rel, "cgroup.procs", dir, now); ok {
		return c.pids, c.err
	}
	pids, err := r.h.Procs(rel)
	if err == nil {
		e.reads.put(rel, "cgroup.procs", cachedRead{pids: pids, dir: dir, due: e.dueAfter(now, rel, "cgroup.procs")})
	}
	return pids, err
}

// isAbsent: the file is not there (the kernel lacks it), which stays so.
func isAbsent(err error) bool {
	return err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, cgroup.ErrUnsupported))
}
