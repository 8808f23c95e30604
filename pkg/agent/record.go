package agent

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// loadRecord reads the JSON file of the state directory a runner keeps its
// memory in (what names it in the log) into v. It says whether v holds the
// file: a missing file is a first start, quietly; an unreadable or damaged
// one is logged, and the caller starts afresh either way.
func (a *Agent) loadRecord(file, what string, v any) bool {
	raw, err := os.ReadFile(filepath.Join(a.opts.StateDir, file))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			a.log.Warn(what+": cannot read them", "file", file, "err", err)
		}
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		a.log.Warn(what+": ignoring them", "file", file, "err", err)
		return false
	}
	return true
}
