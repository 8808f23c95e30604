package state

import (
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// LoadRecord reads file, a JSON record of the state directory dir that a
// runner keeps its memory in (what names it in the log), into v. It says
// whether v holds the file: a missing file is a first start, quietly; an
// unreadable or damaged one is logged, and the caller starts afresh either
// way.
func LoadRecord(log *slog.Logger, dir, file, what string, v any) bool {
	raw, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn(what+": cannot read them", "file", file, "err", err)
		}
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil {
		log.Warn(what+": ignoring them", "file", file, "err", err)
		return false
	}
	return true
}

// RecordLoader is LoadRecord on the state directory dir, as the runners
// take it.
func RecordLoader(log *slog.Logger, dir string) func(file, what string, v any) bool {
	return func(file, what string, v any) bool { return LoadRecord(log, dir, file, what, v) }
}
