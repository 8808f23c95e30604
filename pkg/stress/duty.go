// Package stress is a small load generator: it keeps a chosen share of CPU
// busy and a chosen amount of memory resident, filled with a pattern whose
// checksum proves later that the data survived (NUMA page migration, say).
// duty.go and pattern.go are pure; load.go runs the load.
package stress

import (
	"fmt"
	"time"
)

// Period is the length of one busy/idle cycle of a burner thread. Short
// enough that a cgroup's CPU accounting sees a smooth share, long enough
// that the sleep's wake-up latency is small against the busy part.
const Period = 100 * time.Millisecond

// Threads splits a CPU share given in millicores into per-thread busy
// fractions: one thread per whole CPU, plus one thread for the remainder,
// each then scaled by loadPercent (as stress-ng's --cpu N --cpu-load P).
// 2500 at 100 % gives [1 1 0.5]; 100 gives [0.1]; 1000 at 10 % gives [0.1].
func Threads(milli int64, loadPercent int) ([]float64, error) {
	if milli < 0 {
		return nil, fmt.Errorf("cpu share %dm is negative", milli)
	}
	if loadPercent < 0 || loadPercent > 100 {
		return nil, fmt.Errorf("cpu load %d%% is outside 0-100", loadPercent)
	}
	scale := float64(loadPercent) / 100
	var out []float64
	for ; milli >= 1000; milli -= 1000 {
		out = append(out, scale)
	}
	if milli > 0 {
		out = append(out, float64(milli)/1000*scale)
	}
	return out, nil
}

// DutyCycle is how long a thread with busy fraction f spins and then sleeps
// in each period. f is clamped to [0, 1].
func DutyCycle(f float64, period time.Duration) (busy, idle time.Duration) {
	switch {
	case f <= 0:
		return 0, period
	case f >= 1:
		return period, 0
	}
	busy = time.Duration(f * float64(period))
	return busy, period - busy
}
