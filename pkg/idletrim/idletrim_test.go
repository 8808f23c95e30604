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
		frees := 0
		tr := start(ctx, 2*time.Second, func() { frees++ })
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
		time.Sleep(time.Minute)
		expect("a minute on, with no work", 1)

		tr.Busy()
		tr.Busy() // never blocks, however often
		tr.Busy()
		time.Sleep(3 * time.Second)
		expect("after the next spell of work", 2)

		cancel()
		synctest.Wait()
		tr.Busy()
		time.Sleep(time.Minute)
		expect("after the context ended", 2)
	})
}
