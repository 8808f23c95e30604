package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/pace"
	"github.com/locus-project/locus/pkg/source"
	"github.com/locus-project/locus/pkg/topology/fixture"
)

// burstySource is fakeSource whose Changed channel the test feeds, counting
// the snapshots taken (one per reconcile).
type burstySource struct {
	*fakeSource
	changed   chan struct{}
	snapshots atomic.Int64
}

func (b *burstySource) Changed() <-chan struct{} { return b.changed }
func (b *burstySource) Snapshot(env source.Env) source.Snapshot {
	b.snapshots.Add(1)
	return b.fakeSource.Snapshot(env)
}

// runBurst runs an agent paced by p through half a second of changes, one
// every millisecond, and gives its reconciles (the first included) and
// those that waited for the pace.
func runBurst(t *testing.T, p *pace.Pacer) (reconciles int64, paced float64) {
	t.Helper()
	tree := newCgroupTree(t, cgroup.V2, true, "0-3")
	fake := &fakeSource{snap: source.Snapshot{Reserved: cpuset.New(0), SLO: lsLow50(t)}}
	src := &burstySource{fakeSource: fake, changed: make(chan struct{}, 1)}
	tree.mkcg("kubepods/pod-web", "kubepods/pod-web/app")
	fake.snap.Workloads = append(fake.snap.Workloads, pod("web", 1))
	a, err := New(Options{StateDir: filepath.Join(t.TempDir(), "state"), SysfsRoot: sysfs(t, fixture.Small4),
		CgroupRoot: tree.root, CgroupVersion: tree.v, Source: src, EventSink: fake.emit, Pace: p,
		Resync: time.Hour, MetricsAddr: "", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	// The burst starts once the first reconcile (never paced) has read the
	// source, so a loaded machine's slow start-up does not eat it.
	for src.snapshots.Load() == 0 {
		select {
		case err := <-done:
			t.Fatalf("the agent stopped before its first reconcile: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	tick := time.NewTicker(time.Millisecond)
	for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); <-tick.C {
		notify(src.changed)
	}
	tick.Stop()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mfs, err := a.metrics.Reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "locus_reconciles_paced_total" {
			paced = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return src.snapshots.Load(), paced
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// The pace an operator sets is the one the loop keeps: unpaced, a burst of
// changes is reconciled as fast as they come and no reconcile waits; paced
// with a long pause, most of them wait and there are fewer reconciles.
func TestPaceOption(t *testing.T) {
	unpacedN, unpacedWaited := runBurst(t, &pace.Pacer{})
	pacedN, pacedWaited := runBurst(t, &pace.Pacer{Ratio: pace.MaxRatio, Bound: 200 * time.Millisecond})
	t.Logf("unpaced: %d reconciles, %v paced; paced: %d reconciles, %v paced", unpacedN, unpacedWaited, pacedN, pacedWaited)
	if unpacedWaited != 0 {
		t.Errorf("unpaced: %v reconciles waited for a pace", unpacedWaited)
	}
	if pacedWaited == 0 {
		t.Errorf("paced 100× up to 200 ms: no reconcile waited")
	}
	// Paced, at most one reconcile in each 200 ms bound after the first,
	// and those the pause's timer and the first; unpaced, one after another.
	if pacedN > 5 || unpacedN <= pacedN {
		t.Errorf("%d reconciles paced, %d unpaced: want at most 5 paced and more unpaced", pacedN, unpacedN)
	}
}

// A pace out of bounds is refused before anything is opened, naming the
// field and its value.
func TestPaceOptionChecked(t *testing.T) {
	for _, c := range []struct {
		p    pace.Pacer
		want string
	}{
		{pace.Pacer{Ratio: -1, Bound: time.Second}, "pace ratio -1: want 0 (unpaced) to 100"},
		{pace.Pacer{Ratio: 3, Bound: time.Minute}, "pace bound 1m0s: want 0 (unpaced) to 10s"},
	} {
		state := filepath.Join(t.TempDir(), "state")
		_, err := New(Options{StateDir: state, Pace: &c.p, CgroupRoot: t.TempDir(), CgroupVersion: cgroup.V2})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New with %+v: %v, want %q", c.p, err, c.want)
		}
		if _, serr := os.Stat(state); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("New with %+v created %s", c.p, state)
		}
	}
}
