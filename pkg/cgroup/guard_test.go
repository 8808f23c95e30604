package cgroup

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writers are the only places outside pkg/cgroup that open a file for
// writing, each with what it writes. A cgroup file is none of them: the
// agent, its runners, its executor and its sources write cgroups only
// through this package, whose writer keeps originals and stays below the
// configured root.
var writers = map[string]string{
	"pkg/state/":                            "the checkpoint and the agent's lock under the state directory",
	"pkg/atomicfile/":                       "records under the state directory, replaced whole",
	"pkg/eventlog/":                         "events.jsonl under the state directory",
	"pkg/status/file.go":                    "status.json under the state directory",
	"pkg/supervisor/supervisor.go":          "command workloads' logs under the state directory",
	"pkg/scheduler/plugin/defaultconfig.go": "the scheduler's embedded config, as a temporary file",
	"pkg/topology/fixture/":                 "sysfs fixture trees, for tests",
	"internal/kubetest/":                    "the test control plane's certificates and logs",
	"internal/testfs/":                      "fixture files (sysfs, procfs, cgroup trees) in tests' temporary directories",
	"internal/hugetest/":                    "a node's nr_hugepages in the NUMA test guest's sysfs, restored when the test ends",
	"test/numavm/init/":                     "the QEMU guest's init, inside the guest it boots (its mounts, its test workloads)",
	"tools/":                                "image archives",
}

var (
	writeCall = regexp.MustCompile(`\b(os\.WriteFile|os\.Create|os\.CreateTemp|ioutil\.WriteFile)\(`)
	openCall  = regexp.MustCompile(`\b(os\.OpenFile|unix\.Open|unix\.Openat2?|syscall\.Open)\(`)
	writeFlag = regexp.MustCompile(`O_(WRONLY|RDWR|CREATE?|TRUNC|APPEND)\b`)
)

func TestOnlyCgroupWritesCgroupFiles(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "testdata" || rel == "bench" || rel == "pkg/cgroup") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || allowedWriter(rel) {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(raw), "\n") {
			if writeCall.MatchString(line) || (openCall.MatchString(line) && writeFlag.MatchString(line)) {
				t.Errorf("%s:%d opens a file for writing: cgroup files are written by pkg/cgroup only; anything else belongs in this test's list with what it writes\n\t%s",
					rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func allowedWriter(rel string) bool {
	for prefix := range writers {
		if rel == prefix || (strings.HasSuffix(prefix, "/") && strings.HasPrefix(rel, prefix)) {
			return true
		}
	}
	return false
}
