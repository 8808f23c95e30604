package status

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// File is the name of the status snapshot under the state directory.
const File = "status.json"

// Write replaces status.json atomically (a temp file renamed over it),
// so readers see the old status or the new one. Unlike the checkpoint it is
// not fsynced: it is derived from the state and written again by the first
// reconcile after a restart, so a power cut may lose it but costs nothing.
func Write(dir string, s Status) error {
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+File+".tmp-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	_, err = tmp.Write(append(raw, '\n'))
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

// Read reads the status an agent wrote to stateDir.
func Read(stateDir string) (Status, error) {
	raw, err := os.ReadFile(filepath.Join(stateDir, File))
	if err != nil {
		return Status{}, err
	}
	var s Status
	if err := json.Unmarshal(raw, &s); err != nil {
		return Status{}, fmt.Errorf("%s: %w", filepath.Join(stateDir, File), err)
	}
	return s, nil
}
