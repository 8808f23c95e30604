// Package eventlog keeps what the agent did or could not do, as Kubernetes-like
// Events, in a JSON-lines file under the state directory, and hands each to a
// Sink (the Kubernetes source posts them).
package eventlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/locus-project/locus/pkg/atomicfile"
	"github.com/locus-project/locus/pkg/boundedread"
)

// Event types, as in Kubernetes.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// Event is one thing the agent did or could not do, kept in events.jsonl.
type Event struct {
	Time     time.Time `json:"time"`
	Type     string    `json:"type"`
	Reason   string    `json:"reason"`
	Workload string    `json:"workload,omitempty"`
	Message  string    `json:"message"`
}

// EventsFile is the name of the event log under the state directory.
const EventsFile = "events.jsonl"

// MaxEvents is how many events the log keeps.
const MaxEvents = 1000

// Log appends events to a JSON-lines file and trims it to the last
// MaxEvents lines once it has grown a tenth past that, so trimming (a whole
// rewrite) is rare. A nil path only logs.
type Log struct {
	mu    sync.Mutex
	path  string
	lines int // in the file
	log   *slog.Logger
	now   func() time.Time
	Sink  func(Event) // also receives every event, when set
	holds int         // open holds (see hold)
	// pending holds the lines of events emitted under a hold, appended to
	// the file in one write when the last hold ends.
	pending      []byte
	pendingLines int
}

func Open(path string, log *slog.Logger) (*Log, error) {
	l := &Log{path: path, log: log, now: time.Now}
	if path == "" {
		return l, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("event log: %w", err)
	}
	l.lines = bytes.Count(raw, []byte{'\n'})
	return l, nil
}

// Emit records an event and logs it.
func (l *Log) Emit(typ, reason, workload, format string, args ...any) {
	e := Event{Time: l.now().UTC(), Type: typ, Reason: reason, Workload: workload, Message: fmt.Sprintf(format, args...)}
	level := slog.LevelInfo
	if typ == Warning {
		level = slog.LevelWarn
	}
	attrs := []any{"reason", reason}
	if workload != "" {
		attrs = append(attrs, "workload", workload)
	}
	l.log.Log(context.Background(), level, e.Message, attrs...)
	if l.Sink != nil {
		l.Sink(e)
	}
	if l.path == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.append(e); err != nil {
		l.log.Warn("cannot record event", "file", l.path, "err", err)
	}
}

// Hold gathers the events emitted until the returned function is called
// and appends them to the file in one write then, so that a reconcile with
// an event per workload does not open and write the file hundreds of times.
// Events are logged as they come either way; a kill -9 under a hold loses
// only the file lines of that reconcile's events.
func (l *Log) Hold() (release func()) {
	l.mu.Lock()
	l.holds++
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.holds--; l.holds == 0 {
			if err := l.flush(); err != nil {
				l.log.Warn("cannot record events", "file", l.path, "err", err)
			}
		}
	}
}

func (l *Log) append(e Event) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	l.pending = append(append(l.pending, line...), '\n')
	l.pendingLines++
	if l.holds > 0 {
		return nil
	}
	return l.flush()
}

// flush appends the pending lines and trims the file if it grew too long.
// Lines that cannot be written are dropped: the log is best effort.
func (l *Log) flush() error {
	if len(l.pending) == 0 {
		return nil
	}
	data, n := l.pending, l.pendingLines
	l.pending, l.pendingLines = l.pending[:0], 0
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	l.lines += n
	if l.lines > MaxEvents+MaxEvents/10 {
		return l.trim()
	}
	return nil
}

// trim rewrites the log with its last MaxEvents lines, atomically.
func (l *Log) trim() error {
	raw, err := os.ReadFile(l.path)
	if err != nil {
		return err
	}
	lines := bytes.SplitAfter(raw, []byte{'\n'})
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	if len(lines) > MaxEvents {
		lines = lines[len(lines)-MaxEvents:]
	}
	if err := atomicfile.Write(l.path, bytes.Join(lines, nil), 0o600); err != nil {
		return err
	}
	l.lines = len(lines)
	return nil
}

// MaxFileBytes bounds what Read reads: the log keeps about MaxEvents lines
// of a few hundred bytes each.
const MaxFileBytes = 16 << 20

// Read returns the events in a state directory's log, oldest first.
// Lines that do not parse (a torn last line after a crash) are skipped.
func Read(stateDir string) ([]Event, error) {
	path := stateDir + "/" + EventsFile
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := boundedread.Reader(f, path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	var out []Event
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}
