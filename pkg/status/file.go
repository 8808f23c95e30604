package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/locus-project/locus/pkg/boundedread"
)

// File is the name of the status snapshot under the state directory.
const File = "status.json"

// Write replaces status.json atomically (a temp file renamed over it),
// so readers see the old status or the new one. Unlike the checkpoint it is
// not fsynced: it is derived from the state and written again by the first
// reconcile after a restart, so a power cut may lose it but costs nothing.
// The JSON is compact, one line: it is read by programs (`locus status`,
// which prints its own view, and `jq` for people).
func Write(dir string, s Status) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return WriteEncoded(dir, append(raw, '\n'))
}

// WriteEncoded replaces status.json with raw, a status encoded (Encoder),
// as Write does.
func WriteEncoded(dir string, raw []byte) error {
	tmp, err := os.CreateTemp(dir, "."+File+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	_, err = tmp.Write(raw)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, File))
}

// Encoder encodes statuses as status.json holds them (Write), into buffers
// it reuses, and tells a status that differs from the one last saved only
// in its time: a resync that changed nothing writes nothing. It is used
// from one goroutine at a time.
type Encoder struct {
	cur, saved bytes.Buffer // a status encoded without its time: the last one, the one saved
	file       []byte
}

// zeroTime starts a status encoded without its time (Time is its first
// field).
const zeroTime = `{"time":"0001-01-01T00:00:00Z"`

// Encode encodes s and says whether, but for its time, it differs from the
// status last saved (Saved); when it does not, raw is nil. raw is good
// until the next Encode.
func (e *Encoder) Encode(s Status) (raw []byte, changed bool, err error) {
	bare := s
	bare.Time = time.Time{}
	e.cur.Reset()
	if err := json.NewEncoder(&e.cur).Encode(bare); err != nil { // as json.Marshal, and a newline
		return nil, false, err
	}
	if e.saved.Len() > 0 && bytes.Equal(e.cur.Bytes(), e.saved.Bytes()) {
		return nil, false, nil
	}
	body, ok := bytes.CutPrefix(e.cur.Bytes(), []byte(zeroTime))
	t, terr := s.Time.MarshalJSON()
	if !ok || terr != nil { // not as expected: the plain way
		raw, err := json.Marshal(s)
		if err != nil {
			return nil, false, err
		}
		return append(raw, '\n'), true, nil
	}
	e.file = append(append(append(e.file[:0], `{"time":`...), t...), body...)
	return e.file, true, nil
}

// Saved says the status last encoded was written: the next that differs
// from it only in its time is not written again.
func (e *Encoder) Saved() {
	e.saved.Reset()
	e.saved.Write(e.cur.Bytes())
}

// MaxFileBytes bounds what Read reads: a status of 10,000 workloads is a few
// MiB.
const MaxFileBytes = 64 << 20

// Read reads the status an agent wrote to stateDir.
func Read(stateDir string) (Status, error) {
	raw, err := boundedread.File(filepath.Join(stateDir, File), MaxFileBytes)
	if err != nil {
		return Status{}, err
	}
	var s Status
	if err := json.Unmarshal(raw, &s); err != nil {
		return Status{}, fmt.Errorf("%s: %w", filepath.Join(stateDir, File), err)
	}
	return s, nil
}
