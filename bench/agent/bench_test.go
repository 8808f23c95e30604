package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/hostconfig"
)

func TestScenarioConfig(t *testing.T) {
	for _, s := range []scenario{{n: 200}, {n: 200, memQoS: true, wide: true}} {
		raw, err := s.hostConfig()
		if err != nil {
			t.Fatal(err)
		}
		hc, err := hostconfig.Parse(raw)
		if err != nil {
			t.Fatalf("%+v: the agent would refuse the config: %v", s, err)
		}
		exclusive, cpus := 0, 0
		for i, w := range hc.Workloads {
			if w.Annotations["cpuset-scheduler"] == "true" {
				exclusive++
				cpus += int(w.Resources.Limits.CPU.Value())
			}
			if w.Cgroup != "bench.slice/"+workloadName(i) {
				t.Errorf("workload %d cgroup %q", i, w.Cgroup)
			}
		}
		wantCPUs := 100
		if s.wide {
			wantCPUs = 150
		}
		if len(hc.Workloads) != 200 || exclusive != 100 || cpus != wantCPUs {
			t.Errorf("%+v: %d workloads, %d exclusive with %d CPUs; want 200, 100, %d",
				s, len(hc.Workloads), exclusive, cpus, wantCPUs)
		}
		qos := strings.Join(strings.Fields(string(hc.ResourceQOSConfig)), "")
		if on := strings.Contains(qos, `"enable":true`); on != s.memQoS || strings.Contains(qos, `"enable":false`) == s.memQoS {
			t.Errorf("%+v: memory QoS enable in config = %v", s, on)
		}
	}
}

func fakeStatus(s scenario, memQoS bool, cpus func(i int) int) status {
	var st status
	for i := 0; i < s.n; i++ {
		w := workloadStatus{Name: workloadName(i), CPUs: fmt.Sprintf("2-%d", 1+cpus(i)), Mems: "0"}
		w.MemoryQOS.Enabled = memQoS
		st.Workloads = append(st.Workloads, w)
	}
	return st
}

func TestReachedAndCheckFiles(t *testing.T) {
	s := scenario{n: 8, wide: true, memQoS: true}
	if !reached(fakeStatus(s, true, s.cpus), s) {
		t.Fatal("status matching the scenario not recognised")
	}
	if reached(fakeStatus(s, false, s.cpus), s) {
		t.Error("memory QoS off taken for on")
	}
	if reached(fakeStatus(s, true, func(int) int { return 1 }), s) {
		t.Error("old CPU counts taken for the new ones")
	}

	root := t.TempDir()
	if err := writeCgroupTree(root, s.n); err != nil {
		t.Fatal(err)
	}
	st := fakeStatus(s, true, s.cpus)
	if err := checkFiles(root, st, s); err == nil {
		t.Fatal("untouched files passed the check")
	}
	for _, w := range st.Workloads {
		dir := filepath.Join(root, parent, w.Name)
		cs, _ := cpuset.Parse(w.CPUs)
		list := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(cs.List())), ","), "[]")
		os.WriteFile(filepath.Join(dir, "cpuset.cpus"), []byte(list+"\n"), 0o644) // "2,3" = "2-3"
		os.WriteFile(filepath.Join(dir, "cpuset.mems"), []byte("0\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "memory.wmark_ratio"), []byte("95\n"), 0o644)
	}
	if err := checkFiles(root, st, s); err != nil {
		t.Fatalf("written files failed the check: %v", err)
	}
}

func TestScrapeHistogram(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `# HELP locus_reconcile_duration_seconds Time one reconcile takes.
# TYPE locus_reconcile_duration_seconds histogram
locus_reconcile_duration_seconds_bucket{le="0.001"} 0
locus_reconcile_duration_seconds_bucket{le="0.002"} 3
locus_reconcile_duration_seconds_bucket{le="+Inf"} 4
locus_reconcile_duration_seconds_sum 0.0125
locus_reconcile_duration_seconds_count 4
locus_reconcile_errors_total 0
`)
	}))
	defer srv.Close()
	h, err := scrapeHistogram(strings.TrimPrefix(srv.URL, "http://"), "locus_reconcile_duration_seconds")
	if err != nil {
		t.Fatal(err)
	}
	if h.sum != 0.0125 || h.count != 4 || h.buckets[0.002] != 3 || h.buckets[1e300] != 4 {
		t.Fatalf("histogram %+v", h)
	}
	if _, err := scrapeHistogram(strings.TrimPrefix(srv.URL, "http://"), "locus_missing"); err == nil {
		t.Error("a missing histogram was not reported")
	}
}

func TestPercentile(t *testing.T) {
	var xs []time.Duration
	for i := 100; i >= 1; i-- {
		xs = append(xs, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 99: 99 * time.Millisecond,
		100: 100 * time.Millisecond, 1: time.Millisecond} {
		if got := percentile(xs, p); got != want {
			t.Errorf("p%v = %s, want %s", p, got, want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one sample = %s", got)
	}
}

func TestSampleProc(t *testing.T) {
	s, err := sampleProc(os.Getpid())
	if err != nil || s.rssKiB == 0 || s.anonKiB == 0 || s.fileKiB == 0 || s.anonKiB+s.fileKiB > s.rssKiB {
		t.Fatalf("sampleProc(self) = %+v, %v", s, err)
	}
	var got procSample
	if err := scanRSS(strings.NewReader("Name:\tx\nVmRSS:\t   300 kB\nRssAnon:\t   100 kB\nRssFile:\t   200 kB\n"), &got); err != nil ||
		got != (procSample{rssKiB: 300, anonKiB: 100, fileKiB: 200}) {
		t.Errorf("scanRSS = %+v, %v", got, err)
	}
	for _, text := range []string{"Name:\tx\n", "VmRSS:\t300 kB\nRssAnon:\t100 kB\n", "VmRSS:\tmany kB\nRssAnon:\t1 kB\nRssFile:\t1 kB\n"} {
		var bad procSample
		if err := scanRSS(strings.NewReader(text), &bad); err == nil {
			t.Errorf("status %q accepted", text)
		}
	}
}
