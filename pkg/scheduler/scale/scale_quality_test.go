package scale

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"k8s.io/utils/cpuset"
)

// The placement figures of the side-by-side run come from these: each
// must tell a good decision from a bad one.

func TestSharingACore(t *testing.T) {
	// On the shape, CPU c and c+96 are one core's two threads.
	threads := shape.TotalCores()
	for _, tc := range []struct {
		name string
		held map[string]map[int]string
		want int
	}{
		{"whole cores each", map[string]map[int]string{"n": {1: "a", 1 + threads: "a", 2: "b", 2 + threads: "b"}}, 0},
		{"two pods on one core", map[string]map[int]string{"n": {1: "a", 1 + threads: "b", 2: "b"}}, 2},
		{"the same CPUs on two nodes", map[string]map[int]string{"n": {1: "a"}, "m": {1 + threads: "b"}}, 0},
		{"three pods, one core shared", map[string]map[int]string{"n": {3: "a", 3 + threads: "b", 4: "c"}}, 2},
	} {
		if got := sharingACore(tc.held); got != tc.want {
			t.Errorf("%s: %d pods share a core, want %d", tc.name, got, tc.want)
		}
	}
}

func TestNUMANodes(t *testing.T) {
	threads := shape.TotalCores()
	if got := numaNodes(cpuset.New(1, 2, 1+threads)); got != 1 {
		t.Errorf("one socket's CPUs span %d NUMA nodes, want 1", got)
	}
	if got := numaNodes(cpuset.New(1, threads-1)); got != 2 {
		t.Errorf("CPUs of both sockets span %d NUMA nodes, want 2", got)
	}
}

func TestKoordDecision(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		want    string
		has     bool
		wantErr bool
	}{
		{`{"cpuset":"2-5,98-101","numaNodeResources":[{"node":0}]}`, "2-5,98-101", true, false},
		{`{"numaNodeResources":[{"node":1,"resources":{"cpu":"500m"}}]}`, "", false, false},
		{`{"cpuset":`, "", true, true},
		{`{"cpuset":"5-2"}`, "", true, true},
	} {
		cpus, has, err := decision(koord, map[string]string{koordResourceStatus: tc.raw})
		if has != tc.has || (err != nil) != tc.wantErr || (err == nil && cpus.String() != tc.want) {
			t.Errorf("%s: got %s, decision %t, error %v; want %q, %t, error %t", tc.raw, cpus, has, err, tc.want, tc.has, tc.wantErr)
		}
	}
	if _, has, _ := decision(koord, map[string]string{}); has {
		t.Error("a pod without the annotation has a decision")
	}
}

// koord-scheduler's attempts are read from its /metrics: the figures of a
// pass must be the ones it serves.
func TestKoordMetrics(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="koord-scheduler",result="scheduled"} 7
scheduler_schedule_attempts_total{profile="koord-scheduler",result="unschedulable"} 2
# TYPE scheduler_scheduling_attempt_duration_seconds histogram
scheduler_scheduling_attempt_duration_seconds_bucket{profile="koord-scheduler",result="scheduled",le="0.001"} 1
scheduler_scheduling_attempt_duration_seconds_bucket{profile="koord-scheduler",result="scheduled",le="0.1"} 6
scheduler_scheduling_attempt_duration_seconds_bucket{profile="koord-scheduler",result="scheduled",le="+Inf"} 7
scheduler_scheduling_attempt_duration_seconds_sum{profile="koord-scheduler",result="scheduled"} 0.3
scheduler_scheduling_attempt_duration_seconds_count{profile="koord-scheduler",result="scheduled"} 7
`)
	}))
	defer srv.Close()
	port, err := strconv.Atoi(srv.URL[strings.LastIndexByte(srv.URL, ':')+1:])
	if err != nil {
		t.Fatal(err)
	}
	m := readMeters(t, koord, &koordProcess{port: port})
	if m.attempts["scheduled"] != 7 || m.attempts["unschedulable"] != 2 {
		t.Errorf("attempts %v, want 7 scheduled and 2 unschedulable", m.attempts)
	}
	if got := fmt.Sprint(m.attempt.counts); got != "[1 6 7]" {
		t.Errorf("attempt histogram %v, want [1 6 7]", got)
	}
	if none := readMeters(t, koord, nil); len(none.attempts) != 0 || len(none.attempt.counts) != 0 {
		t.Errorf("before koord-scheduler starts: %+v, want nothing counted", none)
	}
}
