package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/locus-project/locus/pkg/cgroup"
)

// readOriginals loads the originals checkpoint into memory without touching
// the state directory, for --dry-run (cgroup.OpenFileStore would create the
// directory and tidy it). A missing file is an empty store.
func readOriginals(path string) (cgroup.OriginalStore, error) {
	s := cgroup.NewMemoryStore()
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Originals map[string]string `json:"originals"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, s.RecordOriginals(f.Originals)
}
