package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// status is the part of the agent's status.json the checks read.
type status struct {
	ConfigError string `json:"configError"`
	Node        struct {
		CPUs   string `json:"cpus"`
		Shared string `json:"sharedPool"`
		BE     string `json:"bePool"`
	} `json:"node"`
	Workloads []struct {
		Name    string `json:"name"`
		Cgroup  string `json:"cgroup"`
		Pool    string `json:"pool"`
		CPUs    string `json:"cpus"`
		Mems    string `json:"mems"`
		Process *struct {
			PID int `json:"pid"`
		} `json:"process"`
		Problems []string `json:"problems"`
	} `json:"workloads"`
}

// observed is what a converged state held, for the next state to be
// compared with: the exclusive CPUs and the process of each workload.
type observed struct {
	exclusive map[string]string // name -> CPU list, pool exclusive only
	pid       map[string]int    // command workloads
	// poolEmpty: exclusive workloads took every CPU, so the others were
	// left on the CPUs they had.
	poolEmpty bool
}

// verifier checks the agent's work against a config, from the files.
type verifier struct {
	t        *tree
	stateDir string
	base     snapshot // the sub-tree before the first agent started
	// kernelDefault is a memory file's value in a cgroup nobody set it in.
	kernelDefault map[string]string
}

func (v *verifier) readStatus(since time.Time) (status, error) {
	var st status
	p := filepath.Join(v.stateDir, "status.json")
	fi, err := os.Stat(p)
	if err != nil {
		return st, fmt.Errorf("no status.json yet")
	}
	if !fi.ModTime().After(since) {
		return st, fmt.Errorf("status.json not written since the agent started")
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("status.json: %w", err)
	}
	return st, nil
}

// expectedMemory is the memory.limit_in_bytes and memory.soft_limit_in_bytes
// the config asks for: the limit, and (on upstream v1 with
// --memory-v1-soft-limit) the memory.low target, request × lowLimitPercent;
// without them the value the cgroup had before Locus wrote it.
func (v *verifier) expectedMemory(root string, w workload) (limit, soft string) {
	rel := cgroupOf(root, w)
	orig := func(file string) string {
		if w.External {
			return v.base.files["memory/"+rel+"/"+file]
		}
		return v.kernelDefault[file]
	}
	limit, soft = orig("memory.limit_in_bytes"), orig("memory.soft_limit_in_bytes")
	if w.LimitMiB > 0 {
		limit = strconv.FormatInt(int64(w.LimitMiB)*mib, 10)
	}
	if w.LowPercent > 0 {
		soft = strconv.FormatInt(requestMiB*mib*int64(w.LowPercent)/100, 10)
	}
	return limit, soft
}

// converged returns what still differs from the state the config asks for
// (nil once converged) and what that state holds. The definition:
//
//   - status.json was written by this agent run, without a config error, and
//     lists exactly the configured workloads, each in its cgroup;
//   - every workload's cpuset.cpus and cpuset.mems hold what status.json
//     decided; an exclusive workload is pinned in the config and holds the
//     CPU count it asked for (fewer only while a ResizeInfeasible problem
//     says its grow does not fit); any other holds the shared pool (BE: the BE
//     pool); no CPU of an exclusive workload is in another configured
//     workload's cpuset.cpus, except that of a workload status.json gives
//     no CPUs with a NoCPUs problem: when exclusive workloads take every
//     CPU the agent leaves the others where they are; when a pinned request could fit, some
//     workload holds CPUs of its own;
//   - memory.limit_in_bytes and memory.soft_limit_in_bytes are the values the
//     config asks for, or the original ones where it asks for none;
//   - a command workload has exactly one process, the same one in every
//     controller, a sleep, the one status.json names; an external cgroup
//     still holds exactly the campaign's own sleep;
//   - a workload of the universe the config lacks has no cgroup (command) or
//     every setting file back at its original value (external);
//   - the agent's processes (by their LOCUS_STATE_DIR) are exactly the
//     command workloads' processes: no duplicate, none leaked;
//   - against prev (what the last clean stop under prevCfg left, the
//     stop-on-agent-exit workload left out): a command workload that kept
//     running has the same process (re-adopted, never restarted), and an
//     exclusive workload whose CPU request did not change has the same CPUs.
func (v *verifier) converged(cfg config, since time.Time, prevCfg config, prev *observed) ([]string, observed) {
	obs := observed{exclusive: map[string]string{}, pid: map[string]int{}}
	root := v.t.root
	st, err := v.readStatus(since)
	if err != nil {
		return []string{err.Error()}, obs
	}
	var bad []string
	fail := func(f string, a ...any) { bad = append(bad, fmt.Sprintf(f, a...)) }
	if st.ConfigError != "" {
		fail("status.json: config error %s", st.ConfigError)
	}
	var listed []string
	for _, sw := range st.Workloads {
		listed = append(listed, sw.Name)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, cfg.names()) {
		return append(bad, fmt.Sprintf("status.json lists %v, the config %v", listed, cfg.names())), obs
	}
	cpusOf := map[string]cpuset.CPUSet{}
	pinnedFits := false
	all, _ := topology.ParseCPUList(v.t.cpus)
	for _, sw := range st.Workloads {
		w := cfg[sw.Name]
		rel := cgroupOf(root, w)
		if sw.Cgroup != rel {
			fail("%s: status.json cgroup %s, want %s", w.Name, sw.Cgroup, rel)
			continue
		}
		cpus, err1 := v.t.read("cpuset", rel, "cpuset.cpus")
		mems, err2 := v.t.read("cpuset", rel, "cpuset.mems")
		if err1 != nil || err2 != nil {
			fail("%s: cpuset files: %v %v", w.Name, err1, err2)
			continue
		}
		noCPUs := sw.CPUs == ""
		if noCPUs {
			// Exclusive workloads took every CPU: the agent leaves this
			// one's cpuset as it is and must say so (SharedPoolEmpty).
			if !slices.ContainsFunc(sw.Problems, func(p string) bool { return strings.HasPrefix(p, "NoCPUs:") }) {
				fail("%s: status.json decided no CPUs without a NoCPUs problem", w.Name)
			}
			obs.poolEmpty = true
		} else if cpus != sw.CPUs || mems != sw.Mems {
			fail("%s: cpuset.cpus %q cpuset.mems %q, status.json decided %q %q", w.Name, cpus, mems, sw.CPUs, sw.Mems)
		}
		set, err := topology.ParseCPUList(cpus)
		if err != nil {
			fail("%s: cpuset.cpus %q: %v", w.Name, cpus, err)
		}
		if !noCPUs {
			cpusOf[w.Name] = set
		}
		if w.Pinned && w.CPUs < all.Size() {
			pinnedFits = true
		}
		switch {
		case sw.Pool == "exclusive":
			// A workload whose CPU count grew past what is free keeps the
			// CPUs it holds and says so (ResizeInfeasible): a resize in place
			// never moves or drops a held set.
			resizing := slices.ContainsFunc(sw.Problems, func(p string) bool { return strings.HasPrefix(p, "ResizeInfeasible:") })
			if !w.Pinned || (set.Size() != w.CPUs && !(resizing && set.Size() < w.CPUs)) {
				fail("%s: exclusive with CPUs %s, but the config asks pinned=%v cpus=%d", w.Name, cpus, w.Pinned, w.CPUs)
			}
			obs.exclusive[w.Name] = cpus
		case noCPUs:
		case w.Class == "BE":
			if sw.Pool != "be" || cpus != st.Node.BE {
				fail("%s: pool %s with CPUs %s, want the BE pool %s", w.Name, sw.Pool, cpus, st.Node.BE)
			}
		default:
			if sw.Pool != "shared" || cpus != st.Node.Shared {
				fail("%s: pool %s with CPUs %s, want the shared pool %s", w.Name, sw.Pool, cpus, st.Node.Shared)
			}
		}
		wantLimit, wantSoft := v.expectedMemory(root, w)
		limit, err1 := v.t.read("memory", rel, "memory.limit_in_bytes")
		soft, err2 := v.t.read("memory", rel, "memory.soft_limit_in_bytes")
		if err1 != nil || err2 != nil || limit != wantLimit || soft != wantSoft {
			fail("%s: memory.limit_in_bytes %s soft_limit_in_bytes %s, want %s %s (%v %v)", w.Name, limit, soft, wantLimit, wantSoft, err1, err2)
		}
		var pid int
		for i, c := range controllers {
			pids, err := v.t.procs(c, rel)
			if err != nil || len(pids) != 1 || (i > 0 && pids[0] != pid) {
				fail("%s: %s cgroup.procs %v (%v), want one process in every controller", w.Name, c, pids, err)
				break
			}
			pid = pids[0]
		}
		if w.External {
			if sl := v.t.sleepers[w.Name]; pid != 0 && pid != sl.Process.Pid {
				fail("%s: holds pid %d, not the campaign's sleep %d", w.Name, pid, sl.Process.Pid)
			}
		} else if pid != 0 {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			if strings.TrimSpace(string(comm)) != "sleep" {
				fail("%s: process %d is %q, not the command", w.Name, pid, strings.TrimSpace(string(comm)))
			}
			if sw.Process == nil || sw.Process.PID != pid {
				fail("%s: status.json names process %+v, the cgroup holds %d", w.Name, sw.Process, pid)
			}
			obs.pid[w.Name] = pid
		}
	}
	if pinnedFits && len(obs.exclusive) == 0 {
		fail("a pinned workload fits (%s), but none holds CPUs of its own", cfg.describe())
	}
	for n, ex := range obs.exclusive {
		exSet, _ := topology.ParseCPUList(ex)
		for m, set := range cpusOf {
			if m != n && !set.Intersection(exSet).IsEmpty() {
				fail("CPU %s owned twice: %s is exclusive, %s has cpuset.cpus %s", exSet.Intersection(set), n, m, set)
			}
		}
	}
	for _, w := range universe() {
		if _, ok := cfg[w.Name]; ok {
			continue
		}
		rel := cgroupOf(root, w)
		if !w.External {
			for _, c := range controllers {
				if _, err := os.Stat(v.t.dir(c, rel)); err == nil {
					fail("%s: removed from the config, its %s cgroup is still there", w.Name, c)
				}
			}
			continue
		}
		for _, c := range controllers {
			for _, f := range configFiles[c] {
				key := c + "/" + rel + "/" + f
				want, ok := v.base.files[key]
				if !ok {
					continue
				}
				if got, err := v.t.read(c, rel, f); err != nil || got != want {
					fail("%s: removed from the config, %s = %s, originally %s (%v)", w.Name, key, got, want, err)
				}
			}
		}
	}
	var want []int
	for _, p := range obs.pid {
		want = append(want, p)
	}
	got := stateDirProcs(v.stateDir)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		fail("processes the agent started: %v, want exactly the command workloads' %v", got, want)
	}
	if prev != nil {
		for n, p := range prev.pid {
			_, ok := cfg[n]
			if ok && obs.pid[n] != 0 && obs.pid[n] != p {
				fail("%s: process %d replaced by %d: a running workload was restarted", n, p, obs.pid[n])
			}
		}
		for n, cpus := range prev.exclusive {
			w, ok := cfg[n]
			if ok && w.Pinned && w.CPUs == prevCfg[n].CPUs && obs.exclusive[n] != cpus {
				fail("%s: held CPUs %s, now %q with the same request: an assignment moved", n, cpus, obs.exclusive[n])
			}
		}
	}
	return bad, obs
}

// restored returns what differs from the sub-tree as it was before the
// first agent started (nil once every original is back): every cgroup the
// agent made is gone, every setting file of the rest has its original value,
// the campaign's sleeps are where they were, no process the agent started
// runs, and the checkpoint owns nothing.
func (v *verifier) restored() []string {
	now, err := v.t.snapshot()
	if err != nil {
		return []string{err.Error()}
	}
	bad := v.base.diff(now)
	for name, sl := range v.t.sleepers {
		for _, c := range controllers {
			pids, err := v.t.procs(c, v.t.root+"/ext/"+name)
			if err != nil || len(pids) != 1 || pids[0] != sl.Process.Pid {
				bad = append(bad, fmt.Sprintf("%s/%s/ext/%s: cgroup.procs %v (%v), want the campaign's sleep %d", c, v.t.root, name, pids, err, sl.Process.Pid))
			}
		}
	}
	if pids := stateDirProcs(v.stateDir); len(pids) > 0 {
		bad = append(bad, fmt.Sprintf("processes the agent started still run: %v", pids))
	}
	var ck struct {
		Workloads   map[string]json.RawMessage `json:"workloads"`
		Assignments map[string]json.RawMessage `json:"assignments"`
	}
	if raw, err := os.ReadFile(filepath.Join(v.stateDir, "checkpoint.json")); err == nil {
		if err := json.Unmarshal(raw, &ck); err != nil {
			bad = append(bad, "checkpoint.json: "+err.Error())
		} else if len(ck.Workloads)+len(ck.Assignments) > 0 {
			bad = append(bad, fmt.Sprintf("checkpoint.json still owns %d workloads, %d assignments", len(ck.Workloads), len(ck.Assignments)))
		}
	}
	return bad
}

// warnings returns the events at or after since whose reason is one of
// reasons, as "reason: message".
func warnings(stateDir string, since time.Time, reasons ...string) []string {
	f, err := os.Open(filepath.Join(stateDir, "events.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Time     time.Time `json:"time"`
			Reason   string    `json:"reason"`
			Workload string    `json:"workload"`
			Message  string    `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && !e.Time.Before(since) && slices.Contains(reasons, e.Reason) {
			out = append(out, fmt.Sprintf("%s %s: %s", e.Reason, e.Workload, e.Message))
		}
	}
	return out
}
