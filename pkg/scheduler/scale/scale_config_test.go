package scale

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// config is one run's size and conditions, from the environment; the
// defaults are a quick run, bench/scheduler/run.sh --full the recorded one.
type config struct {
	nodes, pods   int
	cpusetPercent int     // of the pods, with cpuset-scheduler
	rounds        int     // each round runs both schedulers, the order alternating
	qps           float32 // both schedulers' --kube-api-qps
	burst         int     // and --kube-api-burst
	creators      int     // goroutines creating the pods
	rate          float64 // pods created per second; 0: as fast as the creators go
	ahead         bool    // create every pod, then start the scheduler
	seed          int64
	timeout       time.Duration // for one scheduler's pass
	// settle is the pause before each pass, after the last one's pods are
	// gone: the apiserver and etcd finish with the deletions (watch
	// fan-out, compaction) before the clock starts, so that whichever
	// scheduler runs first in a round is not charged for the previous one.
	settle time.Duration
	// peer is the scheduler locus-scheduler is compared with:
	// kube-scheduler (the default) or koord-scheduler.
	peer kind
}

func loadConfig(t *testing.T) config {
	t.Helper()
	// Without the gate, a small run checks every decision on each `go
	// test`: the figures need the gate (and a quiet machine).
	nodes, pods, rounds, settle := 20, 100, 1, 0
	if os.Getenv(gate) == "1" {
		nodes, pods, rounds, settle = 100, 500, 2, 10
	}
	c := config{
		nodes:         envInt(t, "LOCUS_SCHED_NODES", nodes),
		pods:          envInt(t, "LOCUS_SCHED_PODS", pods),
		cpusetPercent: envInt(t, "LOCUS_SCHED_CPUSET_PERCENT", 50),
		rounds:        envInt(t, "LOCUS_SCHED_ROUNDS", rounds),
		qps:           float32(envInt(t, "LOCUS_SCHED_QPS", 500)),
		burst:         envInt(t, "LOCUS_SCHED_BURST", 1000),
		creators:      envInt(t, "LOCUS_SCHED_CREATORS", 16),
		rate:          float64(envInt(t, "LOCUS_SCHED_RATE", 0)),
		seed:          int64(envInt(t, "LOCUS_SCHED_SEED", 1)),
	}
	switch c.peer = kind(envString("LOCUS_SCHED_PEER", string(vanilla))); c.peer {
	case vanilla, koord:
	default:
		t.Fatalf("LOCUS_SCHED_PEER=%q: want %s or %s", c.peer, vanilla, koord)
	}
	switch mode := envString("LOCUS_SCHED_CREATE", "stream"); mode {
	case "stream":
	case "ahead":
		c.ahead = true
	default:
		t.Fatalf("LOCUS_SCHED_CREATE=%q: want stream or ahead", mode)
	}
	c.timeout = time.Duration(envInt(t, "LOCUS_SCHED_TIMEOUT_S", 120+c.pods/5)) * time.Second
	c.settle = time.Duration(envInt(t, "LOCUS_SCHED_SETTLE_S", settle)) * time.Second
	if c.nodes < 1 || c.pods < 2 || c.rounds < 1 || c.creators < 1 || c.cpusetPercent < 0 || c.cpusetPercent > 100 {
		t.Fatalf("bad size: %+v", c)
	}
	return c
}

func (c config) String() string {
	rate := "as fast as possible"
	if c.rate > 0 {
		rate = fmt.Sprintf("%.0f/s", c.rate)
	}
	if c.ahead {
		rate += ", all before the scheduler starts"
	} else {
		rate += ", the scheduler running"
	}
	return fmt.Sprintf("peer=%s nodes=%d pods=%d (%d%% cpuset) rounds=%d kube-api-qps=%.0f burst=%d creators=%d rate=%s settle=%s seed=%d",
		c.peer, c.nodes, c.pods, c.cpusetPercent, c.rounds, c.qps, c.burst, c.creators, rate, c.settle, c.seed)
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
