package nodeagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/locus-project/locus/pkg/atomicfile"
)

// SavedConfigFile, in the agent's state directory, holds the last good
// value of each watched ConfigMap key. An agent that restarts while a
// ConfigMap is malformed starts from it, instead of from nothing: from
// nothing it would take memory QoS for off and restore every pod's files.
const SavedConfigFile = "cluster-config.json"

// maxSavedConfig bounds the file read back: a ConfigMap holds at most 1 MiB.
const maxSavedConfig = 4 << 20

// savedConfig is the file's content: by "configMap/key", the value as the
// ConfigMap held it when the agent accepted it.
type savedConfig struct {
	Values map[string]savedValue `json:"values"`
}

type savedValue struct {
	Raw             string    `json:"raw"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
	Accepted        time.Time `json:"accepted"`
}

// loadSavedConfig reads the file; a missing one is empty. A file that does
// not parse is reported and treated as empty: it is rewritten by the next
// good value.
func loadSavedConfig(dir string) (savedConfig, error) {
	s := savedConfig{Values: map[string]savedValue{}}
	if dir == "" {
		return s, nil
	}
	path := filepath.Join(dir, SavedConfigFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > maxSavedConfig {
		return s, fmt.Errorf("%s: not a regular file of at most %d bytes", path, maxSavedConfig)
	}
	var got savedConfig
	if err := json.NewDecoder(f).Decode(&got); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	for k, v := range got.Values {
		s.Values[k] = v
	}
	return s, nil
}

// save writes the file whole, atomically.
func (s savedConfig) save(dir string) error {
	if dir == "" {
		return nil
	}
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, SavedConfigFile), append(raw, '\n'), 0o600)
}
