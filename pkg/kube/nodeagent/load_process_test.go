package nodeagent_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/locus-project/locus/internal/kubetest"
)

// TestLoadAgentProcess is TestLoad with the agent as its own process: the
// `locus agent --node-name` binary against the test's kube-apiserver, so
// that its memory is the agent's alone, without the test's API clients
// and fake kubelet. LOCUS_LOAD_AGENT names the binary (to compare builds);
// without it the test builds cmd/locus. LOCUS_LOAD_HEAPPROFILE=/abs/file
// saves the agent's heap profile at the churn's end, LOCUS_LOAD_CPUPROFILE
// its CPU profile of the churn; LOCUS_LOAD_AGENT_ENV adds variables to its
// environment (e.g. "GOGC=50 GOMEMLIMIT=off").
func TestLoadAgentProcess(t *testing.T) {
	if os.Getenv("LOCUS_LOAD") != "1" {
		t.Skip("the load run takes minutes: LOCUS_LOAD=1 (bench/kube/run.sh)")
	}
	bin := os.Getenv("LOCUS_LOAD_AGENT")
	if bin == "" {
		bin = buildLocus(t)
	}
	n := loadNode(t)
	metricsAddr := freeAddr(t)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := kubetest.WriteKubeconfig(kubeconfig, agentConfig(t)); err != nil {
		t.Fatal(err)
	}
	args := []string{"agent", "--node-name", n.name, "--kubeconfig", kubeconfig,
		"--state-dir", n.stateDir, "--sysfs-root", n.sysfs, "--cgroup-root", n.kubelet.root,
		"--cgroup-version", n.kubelet.v.String(), "--kubelet-cgroup-root", "/", "--kubelet-dir", "",
		"--nri=false", "--reserved-cpus", reserved.String(), "--decision-key-file", writeKeyFile(t),
		"--resource-qos-configmap", n.resQoS, "--pod-qos-configmap", n.podQoS,
		"--nrt-min-interval", "100ms", "--resync", "10s", "--metrics-addr", metricsAddr,
		"--log-level", "debug"}
	if os.Getenv("LOCUS_LOAD_HEAPPROFILE") != "" || os.Getenv("LOCUS_LOAD_CPUPROFILE") != "" {
		args = append(args, "--profiling") // which keeps heap samples: only when asked
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), strings.Fields(os.Getenv("LOCUS_LOAD_AGENT_ENV"))...)
	logf, err := os.Create(n.logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	pid := cmd.Process.Pid
	var setupPeak usage
	peak := &peakUsage{}
	proc := func() usage { u := procUsage(t, pid); peak.see(u); return u }
	took := &loggedTimes{file: n.logFile}
	var allocs0, reconciles0 float64
	r := churn(t, n, loadAgent{metricsAddr: metricsAddr, took: took, sample: proc,
		during: func() { proc() }, churnStarts: func() {
			setupPeak = peak.reset()
			allocs0, reconciles0 = scrapeGauge(t, metricsAddr, allocsMetric), float64(took.count())
		},
		profile: func() func() { return agentCPUProfile(t, metricsAddr, os.Getenv("LOCUS_LOAD_CPUPROFILE")) }})
	// The bytes the agent allocated from the churn's start to now, over the
	// reconciles it logged in that time: what drives its collector, and a
	// measure the machine's load does not disturb.
	allocated, reconciled := scrapeGauge(t, metricsAddr, allocsMetric)-allocs0, float64(took.count())-reconciles0
	t.Logf("LOAD agent allocated %.1f MB over %.0f reconciles since the churn's start: %.2f MB per reconcile",
		allocated/1e6, reconciled, allocated/1e6/max(reconciled, 1))
	saveHeapProfile(t, metricsAddr, os.Getenv("LOCUS_LOAD_HEAPPROFILE"))
	heap := scrapeGauge(t, metricsAddr, "go_memstats_heap_inuse_bytes")
	t.Logf("LOAD %s | agent process RSS %.1f MiB (RssAnon %.1f, RssFile %.1f) at the end; largest sampled during the churn %.1f MiB (RssAnon %.1f, RssFile %.1f), during the pods' creation %.1f MiB (RssAnon %.1f, RssFile %.1f); VmHWM %.1f MiB | Go heap in use %.1f MiB | CPU %.2f s = %.0f%% of a core during churn (the agent process alone)",
		r, mib(r.end.rss), mib(r.end.anon), mib(r.end.file), mib(peak.max.rss), mib(peak.max.anon), mib(peak.max.file),
		mib(setupPeak.rss), mib(setupPeak.anon), mib(setupPeak.file), mib(r.end.hwm), heap/(1<<20), r.cpu().Seconds(), r.cpuShare())
}

// allocsMetric is the agent's bytes allocated since it started (the
// runtime's /gc/heap/allocs:bytes).
const allocsMetric = "go_memstats_alloc_bytes_total"

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// buildLocus builds cmd/locus into the test's temporary directory.
func buildLocus(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "locus")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/locus-project/locus/cmd/locus").CombinedOutput()
	if err != nil {
		t.Fatalf("go build cmd/locus: %v\n%s", err, out)
	}
	return bin
}

// procUsage reads the memory and CPU time of process pid from /proc.
func procUsage(t *testing.T, pid int) usage {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("the agent process: %v", err)
	}
	var u usage
	fields := map[string]*int64{"VmRSS:": &u.rss, "VmHWM:": &u.hwm, "RssAnon:": &u.anon, "RssFile:": &u.file}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && fields[f[0]] != nil {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			*fields[f[0]] = kb << 10
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("the agent process: %v", err)
	}
	// utime and stime are the 14th and 15th fields, counted after the
	// command's name, which may hold spaces, in parentheses.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
	f := strings.Fields(rest)
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	u.cpu = time.Duration(utime+stime) * (time.Second / 100) // USER_HZ
	return u
}

// peakUsage keeps the largest memory figures sampled.
type peakUsage struct {
	mu  sync.Mutex
	max usage
}

// reset returns the largest sampled so far and starts again.
func (p *peakUsage) reset() usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.max
	p.max = usage{}
	return m
}

func (p *peakUsage) see(u usage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if u.rss > p.max.rss {
		p.max = u
	}
}

// loggedTimes reads the reconciles' durations from the agent's debug log.
type loggedTimes struct{ file string }

func (l *loggedTimes) all() []time.Duration {
	f, err := os.Open(l.file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []time.Duration
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, " msg=reconciled ") {
			continue
		}
		if _, v, ok := strings.Cut(line, " took="); ok {
			v, _, _ = strings.Cut(v, " ")
			if d, err := time.ParseDuration(v); err == nil {
				out = append(out, d)
			}
		}
	}
	return out
}

func (l *loggedTimes) count() int { return len(l.all()) }

func (l *loggedTimes) since(n int) []time.Duration { return l.all()[n:] }

// scrapeGauge is one unlabelled metric's value.
func scrapeGauge(t *testing.T, addr, name string) float64 {
	t.Helper()
	body := get(t, "http://"+addr+"/metrics")
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %q", name, v)
			}
			return f
		}
	}
	t.Fatalf("no metric %s at %s", name, addr)
	return 0
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %v %s", url, err, resp.Status)
	}
	return body
}

// saveHeapProfile saves the agent's heap profile (after a collection) to
// file; nothing with file "".
func saveHeapProfile(t *testing.T, addr, file string) {
	t.Helper()
	if file != "" {
		if err := os.WriteFile(file, get(t, "http://"+addr+"/debug/pprof/heap?gc=1"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// agentCPUProfile profiles the agent's CPU over the churn's planned length
// into file, from its pprof endpoint; the returned function waits for the
// profile and saves it. With file "" it does nothing.
func agentCPUProfile(t *testing.T, addr, file string) (wait func()) {
	t.Helper()
	if file == "" {
		return func() {}
	}
	seconds := int((loadWaves * loadWaveEvery).Seconds())
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, seconds))
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil {
			err = os.WriteFile(file, b, 0o644)
		}
		done <- err
	}()
	return func() {
		if err := <-done; err != nil {
			t.Errorf("the agent's CPU profile: %v", err)
		}
	}
}
