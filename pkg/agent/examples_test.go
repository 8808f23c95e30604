package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/locus-project/locus/pkg/hostsource"
	"github.com/locus-project/locus/pkg/workload"
)

// The shipped examples and the built-in config must load as they are.
func TestExamplesParse(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	if len(files) == 0 && inGuest() {
		t.Skip("the NUMA test guest holds this package's directory only, not examples/")
	}
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := workload.ParseConfig(raw)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(resolveWorkloads(cfg.Host, hostPaths)) == 0 {
			t.Errorf("%s has no workloads", f)
		}
	}
	if !bytes.Contains(hostsource.DefaultConfigYAML(), []byte("stop-on-agent-exit")) {
		t.Error("built-in config does not stop its demo workloads on exit")
	}
}
