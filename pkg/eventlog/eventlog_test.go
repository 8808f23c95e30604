package eventlog

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestEventLogKeepsTheLastEvents(t *testing.T) {
	for _, held := range []bool{false, true} {
		t.Run(fmt.Sprintf("held=%v", held), func(t *testing.T) { testEventLog(t, held) })
	}
}

func testEventLog(t *testing.T, held bool) {
	dir := t.TempDir()
	l, err := Open(filepath.Join(dir, EventsFile), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	total := MaxEvents + MaxEvents/10 + 5
	release := func() {}
	for i := 0; i < total; i++ {
		if held && i%300 == 0 {
			release()
			release = l.Hold() // holds that together cross a trim
			inner := l.Hold()  // and nest
			l.Emit(Normal, "Test", "w", "event %d", i)
			inner()
			if evs, _ := Read(dir); len(evs) > 0 && evs[len(evs)-1].Message == fmt.Sprintf("event %d", i) {
				t.Fatalf("event %d written before its hold ended", i)
			}
			continue
		}
		l.Emit(Normal, "Test", "w", "event %d", i)
	}
	release()
	evs, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) > MaxEvents+MaxEvents/10 || len(evs) < MaxEvents {
		t.Fatalf("%d events kept, want between %d and %d", len(evs), MaxEvents, MaxEvents+MaxEvents/10)
	}
	if last := evs[len(evs)-1].Message; last != "event "+strconv.Itoa(total-1) {
		t.Errorf("last event %q, want the newest", last)
	}
	// A torn last line (crash mid-write) is skipped, not an error.
	f, _ := os.OpenFile(filepath.Join(dir, EventsFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"Nor`)
	f.Close()
	if again, err := Read(dir); err != nil || len(again) != len(evs) {
		t.Errorf("torn line: %d events, %v", len(again), err)
	}
}
