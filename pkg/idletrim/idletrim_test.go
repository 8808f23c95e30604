package idletrim

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

func TestTrimsOnceAfterEachQuietSpell(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		frees, pageOuts := 0, 0
		tr := start(ctx, 2*time.Second, func() { frees++ }, func() { pageOuts++ })
		expect := func(step string, want int) {
			t.Helper()
			synctest.Wait()
			if frees != want {
				t.Fatalf("%s: %d frees, want %d", step, frees, want)
			}
		}
		time.Sleep(time.Minute)
		expect("before any work", 0)

		tr.Busy()
		time.Sleep(1500 * time.Millisecond)
		expect("inside the quiet period", 0)
		tr.Busy() // more work: the quiet period starts again
		time.Sleep(1500 * time.Millisecond)
		expect("inside the second quiet period", 0)
		time.Sleep(time.Second)
		expect("after the quiet period", 1)
		if pageOuts != 1 {
			t.Fatalf("after the first quiet spell: %d page-outs, want 1", pageOuts)
		}
		time.Sleep(time.Minute)
		expect("a minute on, with no work", 1)

		tr.Busy()
		tr.Busy() // never blocks, however often
		tr.Busy()
		time.Sleep(3 * time.Second)
		expect("after the next spell of work", 2)
		if pageOuts != 1 {
			t.Fatalf("after the second quiet spell: %d page-outs, want still 1", pageOuts)
		}

		cancel()
		synctest.Wait()
		tr.Busy()
		time.Sleep(time.Minute)
		expect("after the context ended", 2)
	})
}

// The end of start-up hands the executable's pages back at once, when work
// goes on without a quiet spell, and only once.
func TestPagesOutAtStartUpOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		frees, pageOuts := 0, 0
		tr := start(ctx, 2*time.Second, func() { frees++ }, func() { pageOuts++ })
		tr.StartedUp()
		synctest.Wait()
		if frees != 0 || pageOuts != 1 {
			t.Fatalf("at start-up's end, busy: %d frees, %d page-outs; want 0, 1", frees, pageOuts)
		}
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		if frees != 0 {
			t.Fatalf("inside the quiet period after start-up: %d frees, want 0", frees)
		}
		tr.StartedUp()
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if frees != 1 || pageOuts != 1 {
			t.Fatalf("after a quiet spell: %d frees, %d page-outs; want 1, 1", frees, pageOuts)
		}
	})
}
