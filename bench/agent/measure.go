package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/locus-project/locus/pkg/topology"
)

// status is the part of the agent's status.json the benchmark reads.
type status struct {
	Time      time.Time        `json:"time"`
	Workloads []workloadStatus `json:"workloads"`
}

type workloadStatus struct {
	Name      string `json:"name"`
	CPUs      string `json:"cpus"`
	Mems      string `json:"mems"`
	MemoryQOS struct {
		Enabled bool `json:"enabled"`
	} `json:"memoryQOS"`
}

func readStatus(stateDir string) (status, error) {
	var st status
	raw, err := os.ReadFile(filepath.Join(stateDir, "status.json"))
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(raw, &st)
}

// reached says whether the status shows every workload as scenario s wants.
func reached(st status, s scenario) bool {
	if len(st.Workloads) != s.n {
		return false
	}
	for _, w := range st.Workloads {
		var i int
		if _, err := fmt.Sscanf(w.Name, "w%03d", &i); err != nil || w.MemoryQOS.Enabled != s.memQoS {
			return false
		}
		if s.exclusive(i) {
			cpus, err := topology.ParseCPUList(w.CPUs)
			if err != nil || cpus.Size() != s.cpus(i) {
				return false
			}
		}
	}
	return true
}

// checkFiles compares the cgroup files with the status: cpuset.cpus and
// cpuset.mems as decided, memory.wmark_ratio 95 with memory QoS on and its
// original 0 with it off. It proves the agent wrote what it reported.
func checkFiles(cgroupRoot string, st status, s scenario) error {
	wantRatio := "0"
	if s.memQoS {
		wantRatio = "95"
	}
	for _, w := range st.Workloads {
		dir := filepath.Join(cgroupRoot, parent, w.Name)
		for file, want := range map[string]string{"cpuset.cpus": w.CPUs, "cpuset.mems": w.Mems, "memory.wmark_ratio": wantRatio} {
			raw, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				return err
			}
			got := strings.TrimSpace(string(raw))
			if strings.HasPrefix(file, "cpuset.") {
				a, errA := topology.ParseCPUList(got)
				b, errB := topology.ParseCPUList(want)
				if errA == nil && errB == nil && a.Equals(b) {
					continue
				}
			} else if got == want {
				continue
			}
			return fmt.Errorf("%s/%s holds %q, status says %q", dir, file, got, want)
		}
	}
	return nil
}

// histogram is a Prometheus histogram's running totals.
type histogram struct {
	sum     float64
	count   float64
	buckets map[float64]float64 // upper bound -> cumulative count
}

// scrapeHistogram reads one histogram from a /metrics endpoint.
func scrapeHistogram(addr, name string) (histogram, error) {
	h := histogram{buckets: map[float64]float64{}}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return h, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	found := false
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return h, fmt.Errorf("metrics line %q: %w", line, err)
		}
		key := line[:i]
		switch {
		case key == name+"_sum":
			h.sum, found = v, true
		case key == name+"_count":
			h.count = v
		case strings.HasPrefix(key, name+`_bucket{le="`):
			le := strings.TrimSuffix(strings.TrimPrefix(key, name+`_bucket{le="`), `"}`)
			bound, err := strconv.ParseFloat(le, 64)
			if le == "+Inf" {
				bound, err = 1e300, nil
			}
			if err != nil {
				return h, fmt.Errorf("metrics line %q: %w", line, err)
			}
			h.buckets[bound] = v
		}
	}
	if !found {
		return h, fmt.Errorf("no %s on http://%s/metrics", name, addr)
	}
	return h, sc.Err()
}

// percentile is the nearest-rank p-th percentile of xs (0 < p <= 100).
func percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(p/100*float64(len(s)) + 0.999999999)
	return s[min(max(rank, 1), len(s))-1]
}

// procSample is a process's CPU time so far and its resident memory: all of
// it, and its two parts, the anonymous pages (heap, stacks, the runtime's
// own) and the file pages mapped in, nearly all of them the binary's. The
// file part depends on which code ran and on how the page cache holds the
// binary (a file just written may sit in 2 MiB folios that are mapped whole),
// not on what the agent allocates.
type procSample struct {
	cpuTicks                 uint64 // utime + stime, in clock ticks
	rssKiB, anonKiB, fileKiB uint64
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

func sampleProc(pid int) (procSample, error) {
	var s procSample
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	text := string(raw)
	fields := strings.Fields(text[strings.LastIndexByte(text, ')')+1:])
	if len(fields) < 13 {
		return s, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	// fields[0] is field 3; utime and stime are fields 14 and 15.
	ut, err1 := strconv.ParseUint(fields[11], 10, 64)
	st, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return s, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	s.cpuTicks = ut + st
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	defer f.Close()
	return s, scanRSS(f, &s)
}

// scanRSS reads VmRSS, RssAnon and RssFile from /proc/PID/status.
func scanRSS(r io.Reader, s *procSample) error {
	fields := map[string]*uint64{"VmRSS:": &s.rssKiB, "RssAnon:": &s.anonKiB, "RssFile:": &s.fileKiB}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, v, _ := strings.Cut(sc.Text(), "\t")
		dst, ok := fields[name]
		if !ok {
			continue
		}
		if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", dst); err != nil {
			return fmt.Errorf("%s %q: %w", name, v, err)
		}
		delete(fields, name)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for name := range fields {
		return fmt.Errorf("no %s line", strings.TrimSuffix(name, ":"))
	}
	return nil
}

// startProfile fetches the agent's CPU profile (/debug/pprof/profile) over
// secs seconds and writes it to file. Over the changes, secs is about as
// long as they take: each waits out the config settle delay, 1 s by
// default, and a pause of 0.3 s after it.
func startProfile(addr, file string, secs int) <-chan error {
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, secs))
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("/debug/pprof/profile: %s (was the agent started with --profiling?)", resp.Status)
			}
			f, err := os.Create(file)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, resp.Body); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}()
	}()
	return done
}
