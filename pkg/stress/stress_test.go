package stress

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestThreads(t *testing.T) {
	for _, tc := range []struct {
		milli int64
		load  int
		want  []float64
	}{
		{0, 100, nil},
		{100, 100, []float64{0.1}},
		{1000, 100, []float64{1}},
		{2000, 100, []float64{1, 1}},
		{2500, 100, []float64{1, 1, 0.5}},
		{1, 100, []float64{0.001}},
		{1000, 10, []float64{0.1}},
		{2500, 50, []float64{0.5, 0.5, 0.25}},
		{2000, 0, []float64{0, 0}},
	} {
		got, err := Threads(tc.milli, tc.load)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Threads(%d, %d) = %v, %v; want %v", tc.milli, tc.load, got, err, tc.want)
		}
	}
	for _, bad := range [][2]int64{{-1, 100}, {1000, -1}, {1000, 101}} {
		if _, err := Threads(bad[0], int(bad[1])); err == nil {
			t.Errorf("Threads(%d, %d) accepted a bad share", bad[0], bad[1])
		}
	}
}

func TestDutyCycle(t *testing.T) {
	p := 100 * time.Millisecond
	for _, tc := range []struct {
		f          float64
		busy, idle time.Duration
	}{
		{0, 0, p}, {-1, 0, p}, {0.1, 10 * time.Millisecond, 90 * time.Millisecond},
		{0.5, 50 * time.Millisecond, 50 * time.Millisecond}, {1, p, 0}, {3, p, 0},
	} {
		b, i := DutyCycle(tc.f, p)
		if b != tc.busy || i != tc.idle {
			t.Errorf("DutyCycle(%v) = %s/%s, want %s/%s", tc.f, b, i, tc.busy, tc.idle)
		}
	}
}

func TestPatternDeterministicAndSeeded(t *testing.T) {
	a, b, c := make([]byte, 4099), make([]byte, 4099), make([]byte, 4099)
	Fill(a, 7)
	Fill(b, 7)
	Fill(c, 8)
	if Checksum(a) != Checksum(b) || FirstMismatch(a, 7) != nil {
		t.Fatal("the same seed gave different memory")
	}
	if Checksum(a) == Checksum(c) || FirstMismatch(c, 7) == nil {
		t.Fatal("different seeds gave the same memory")
	}
	zero := make([]byte, 4099)
	if Checksum(zero) == Checksum(a) {
		t.Fatal("the pattern checksums like zeroed memory")
	}
}

// Any one flipped byte, anywhere (tail included), is caught by the checksum
// and located exactly by FirstMismatch.
func TestChecksumCatchesFlippedByte(t *testing.T) {
	buf := make([]byte, 1<<12+5)
	Fill(buf, 42)
	sum := Checksum(buf)
	for _, off := range []int{0, 1, 7, 8, 2048, len(buf) - 6, len(buf) - 1} {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			buf[off] ^= flip
			if Checksum(buf) == sum {
				t.Errorf("flip %#x at %d: checksum unchanged", flip, off)
			}
			c := FirstMismatch(buf, 42)
			if c == nil || c.Offset != off || c.Got != c.Want^flip {
				t.Errorf("flip %#x at %d: FirstMismatch = %+v", flip, off, c)
			}
			buf[off] ^= flip
		}
	}
	if Checksum(buf) != sum {
		t.Fatal("restoring every byte did not restore the checksum")
	}
}

func TestRunKeepsMemoryIntact(t *testing.T) {
	s, err := Run(context.Background(), Config{CPUMilli: 100, LoadPercent: 100, MemoryBytes: 1<<20 + 1,
		Duration: 120 * time.Millisecond, TouchInterval: 20 * time.Millisecond, Verify: true, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s.MemoryBytes%4096 != 0 || s.MemoryBytes < 1<<20+1 {
		t.Errorf("memory %d: want whole pages covering the request", s.MemoryBytes)
	}
	if s.Touches == 0 || s.Verified < 2 || s.Threads != 1 {
		t.Errorf("summary %+v: want touches, at least two verifications and one thread", s)
	}
	if s.Elapsed < 120*time.Millisecond {
		t.Errorf("ran %s, shorter than the duration", s.Elapsed)
	}
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	s, err := Run(ctx, Config{CPUMilli: 1000, LoadPercent: 100, TouchInterval: time.Second})
	if err != nil || s.Elapsed > 2*time.Second {
		t.Fatalf("Run with duration 0 did not stop with its context: %+v, %v", s, err)
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	for _, c := range []Config{
		{CPUMilli: -1, TouchInterval: time.Second},
		{CPUMilli: 1000, LoadPercent: 101, TouchInterval: time.Second},
		{MemoryBytes: -1, TouchInterval: time.Second},
		{TouchInterval: 0},
	} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("Run(%+v) accepted a bad config", c)
		}
	}
}

func TestVerifyReportsCorruption(t *testing.T) {
	buf := make([]byte, 8192)
	Fill(buf, 1)
	s := Summary{Checksum: Checksum(buf)}
	buf[5000] ^= 0x10
	err := verify(buf, 1, &s)
	var c *Corruption
	if !errors.As(err, &c) || c.Offset != 5000 {
		t.Fatalf("verify = %v, want corruption at 5000", err)
	}
}

func TestPeaksCheck(t *testing.T) {
	ok := Peaks{Threads: 2, Work: 20 * time.Millisecond, Every: 500 * time.Millisecond}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Peaks{{Threads: 0, Work: time.Millisecond, Every: time.Second}, {Threads: 2, Work: 0, Every: time.Second},
		{Threads: 2, Work: time.Second, Every: time.Millisecond}, {Threads: 1000, Work: time.Millisecond, Every: time.Second}} {
		if err := p.Check(); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

// TestSummarize: nearest-rank percentiles of the peaks' latencies.
func TestSummarize(t *testing.T) {
	var lat []time.Duration
	for i := 100; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	s := Summarize(Peaks{Threads: 2, Work: time.Millisecond}, lat, time.Second)
	if s.Peaks != 100 || s.P50 != 50*time.Millisecond || s.P99 != 99*time.Millisecond || s.Max != 100*time.Millisecond {
		t.Errorf("%+v", s)
	}
	if s := Summarize(Peaks{}, nil, 0); s.Peaks != 0 || s.Max != 0 {
		t.Errorf("empty: %+v", s)
	}
}

// TestRunPeaks runs a short peak load: every peak takes at least its work.
func TestRunPeaks(t *testing.T) {
	s, err := RunPeaks(context.Background(), Peaks{Threads: 1, Work: 2 * time.Millisecond, Every: 10 * time.Millisecond, Duration: 100 * time.Millisecond})
	if err != nil || s.Peaks < 3 || s.P50 < 2*time.Millisecond {
		t.Fatalf("%v, %v", s, err)
	}
}

func TestMemBWCheck(t *testing.T) {
	for _, ok := range []MemBW{{}, {Workers: 0, Bytes: 0}, {Workers: 1, Bytes: MinMemBWBytes}, {Workers: MaxMemBWWorkers, Bytes: MaxMemBWBytes}} {
		if err := ok.Check(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	for _, tc := range []struct {
		m    MemBW
		flag string
	}{
		{MemBW{Workers: -1, Bytes: MinMemBWBytes}, "--mem-bw -1"},
		{MemBW{Workers: MaxMemBWWorkers + 1, Bytes: MinMemBWBytes}, "--mem-bw 257"},
		{MemBW{Workers: 1, Bytes: MinMemBWBytes - 1}, "--mem-bw-size"},
		{MemBW{Workers: 1, Bytes: MaxMemBWBytes + 1}, "--mem-bw-size"},
	} {
		if err := tc.m.Check(); err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%+v: err %v, want one naming %s", tc.m, err, tc.flag)
		}
	}
}

// TestRunStreamsMemory: the workers move at least their whole buffer once
// (a pass reads and writes half of it) and stop with the run.
func TestRunStreamsMemory(t *testing.T) {
	s, err := Run(context.Background(), Config{LoadPercent: 100, Duration: 150 * time.Millisecond,
		TouchInterval: time.Second, MemBW: MemBW{Workers: 2, Bytes: 2<<20 + 1}})
	if err != nil {
		t.Fatal(err)
	}
	if s.MemBW.Workers != 2 || s.MemBW.Bytes != 2<<20+4096 {
		t.Errorf("summary %+v: want 2 workers over whole pages covering 2 MiB + 1", s)
	}
	if s.Streamed < 2*s.MemBW.Bytes {
		t.Errorf("streamed %d bytes, less than one pass of each worker", s.Streamed)
	}
	if s.Elapsed > 2*time.Second || !strings.Contains(s.String(), "2 memory-bandwidth worker(s)") {
		t.Errorf("ran %s: %s", s.Elapsed, s)
	}
}

// TestStreamCopiesBothWays: a pass copies the first half onto the second,
// the next one back.
func TestStreamCopiesBothWays(t *testing.T) {
	buf := make([]byte, 4*memBWChunk+10)
	Fill(buf, 9)
	want := append([]byte(nil), buf[:len(buf)/2]...)
	var stop atomic.Bool
	var moved atomic.Int64
	done := make(chan struct{})
	go func() { stream(buf, &stop, &moved); close(done) }()
	for moved.Load() < int64(2*len(buf)) {
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	<-done
	half := len(buf) / 2
	if !bytes.Equal(buf[:half], want) || !bytes.Equal(buf[half:2*half], want) {
		t.Fatal("after two passes the halves are not both the first half's data")
	}
}

func TestProcs(t *testing.T) {
	for _, tc := range [][3]int{{1, 0, 1}, {1, 3, 4}, {8, 3, 8}, {2, 2, 3}} {
		if got := Procs(tc[0], tc[1]); got != tc[2] {
			t.Errorf("Procs(%d, %d) = %d, want %d", tc[0], tc[1], got, tc[2])
		}
	}
}

// TestRunRestoresProcs: the run raises GOMAXPROCS for its threads and puts
// it back after.
func TestRunRestoresProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	if _, err := Run(context.Background(), Config{CPUMilli: 100, LoadPercent: 100, Duration: 20 * time.Millisecond,
		TouchInterval: time.Second, MemBW: MemBW{Workers: before + 2, Bytes: MinMemBWBytes}}); err != nil {
		t.Fatal(err)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d after the run, %d before", after, before)
	}
}
