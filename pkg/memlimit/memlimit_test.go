package memlimit

import (
	"context"
	"runtime/debug"
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live, floor uint64
		want        int64
	}{
		{0, 32 * mib, 32 * mib},
		{12 * mib, 32 * mib, 32 * mib},   // a small node: the floor bounds the slack
		{16 * mib, 32 * mib, 32 * mib},   // exactly half: still the floor
		{20 * mib, 32 * mib, 40 * mib},   // a busy reconcile: never under twice what is live
		{300 * mib, 32 * mib, 600 * mib}, // a large node: as GOGC=100 would have it
		{1 << 63, 32 * mib, 1 << 62},     // saturates, never wraps
		{1<<64 - 1, 1<<64 - 1, 1 << 62},  // a floor beyond what can be asked
		{5 * mib, 0, 10 * mib},           // no floor: twice the live heap
	} {
		if got := For(tc.live, tc.floor); got != tc.want {
			t.Errorf("For(live %d, floor %d) = %d, want %d", tc.live, tc.floor, got, tc.want)
		}
	}
}

// Follow sets the limit at once, from the live heap now.
func TestFollowSetsTheLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const floor = 1 << 40 // far above this test's live heap
	Follow(ctx, floor, time.Hour)
	if got := debug.SetMemoryLimit(-1); got != floor {
		t.Errorf("limit in force %d, want the floor %d", got, int64(floor))
	}
}
