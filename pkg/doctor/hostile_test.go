package doctor

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/pkg/kubelet"
)

// busyHost reads every file a check may read: KSM runs (merge_across_nodes
// is read), wmark_min_adj exists (the watermarks are judged).
func busyHost() tree {
	return hostV2().with("sys/kernel/mm/ksm/run", "1", "cgroup/kubepods.slice/memory.wmark_min_adj", "0")
}

// contentRead are the files of a host whose content a check reads (the
// others are only looked for).
func contentRead(t tree) []string {
	var out []string
	for p, c := range t {
		if c == dir || c == socket || c == fifo {
			continue
		}
		if strings.HasPrefix(p, "cgroup/") && !strings.HasSuffix(p, "cgroup.subtree_control") && p != "cgroup/kubepods.slice/cgroup.controllers" {
			continue
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Every file a check reads, made empty, huge, binary, a pipe or a
// directory: no check crashes or hangs, and a file that cannot be what it
// should gives a warn or fail naming its path.
func TestHostileFiles(t *testing.T) {
	hostile := map[string]string{
		"truncated": "", "huge": "", "binary": "\x00\xff\xfe",
		"fifo": fifo, "directory": dir, "foreign": "<html>not this</html>\n",
	}
	for _, host := range []struct {
		name string
		t    tree
	}{{"v2", busyHost()}, {"v1", hostV1().with("sys/kernel/mm/ksm/run", "1")}, {"alibaba", alibabaV1().with("sys/kernel/mm/ksm/run", "1")}} {
		for _, p := range contentRead(host.t) {
			if v2, ok := busyHost()[p]; ok && host.name != "v2" && v2 == host.t[p] {
				continue // tried on the v2 host
			}
			for kind, content := range hostile {
				t.Run(host.name+"/"+p+"/"+kind, func(t *testing.T) {
					tr := host.t.with(p, gone)
					tr[p] = content
					if kind == "huge" {
						// Just past the file's bound: the kubelet's files
						// have their own, larger ones.
						limit := maxAttr
						switch {
						case p == "kubelet/config.yaml":
							limit = kubelet.MaxConfigBytes
						case strings.HasPrefix(p, "kubelet/"):
							limit = kubelet.MaxFileBytes
						}
						tr[p] = strings.Repeat("1", limit+1)
					}
					env := tr.write(t)
					rs := Run(env)
					named := false
					for _, r := range rs {
						if strings.Contains(r.Found, "the check itself failed") {
							t.Fatalf("%s crashed: %s", r.Check, r.Found)
						}
						if (r.Status == Warn || r.Status == Fail) && strings.Contains(r.Found, p) {
							named = true
						}
					}
					// An empty or foreign file can be valid text for a few
					// files (an empty offline list, a cmdline); the others
					// can never be.
					if kind != "truncated" && kind != "foreign" && !named {
						t.Errorf("no warn or fail names %s:\n%s", p, table(rs))
					}
				})
			}
		}
	}
}

func table(rs []Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s %s %s\n", r.Check, r.Status, r.Found)
	}
	return b.String()
}

// snapshot is every entry under top with its mode, size, mtime and content.
func snapshot(t *testing.T, top string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sum := ""
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum = fmt.Sprintf("%x", sha256.Sum256(b))
		}
		out[p] = fmt.Sprintf("%v %d %d %s", fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), sum)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The doctor reads and never writes: every host fixture, healthy or broken,
// is the same, entry for entry, after every check ran on it.
func TestNeverWrites(t *testing.T) {
	for name, tr := range map[string]tree{
		"v2": busyHost(), "v1": hostV1(), "alibaba": alibabaV1(),
		"static kubelet": hostV2().with("kubelet/config.yaml", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncpuManagerPolicy: static\nmemoryManagerPolicy: Static\n",
			"kubelet/cpu_manager_state", checkpoint("cpu_static"), "kubelet/memory_manager_state", checkpoint("memory_static")),
		"broken": busyHost().with("proc/self/status", fifo, "sys/devices/system/cpu/online", "", "kubelet/config.yaml", "\x00",
			"kubelet/cpu_manager_state", fifo, "kubelet/memory_manager_state", "{}"),
	} {
		t.Run(name, func(t *testing.T) {
			env := tr.write(t)
			top := filepath.Dir(env.SysfsRoot)
			before := snapshot(t, top)
			rs := Run(env)
			if len(rs) != len(Checks()) {
				t.Fatalf("%d results for %d checks", len(rs), len(Checks()))
			}
			after := snapshot(t, top)
			for p, s := range before {
				if after[p] != s {
					t.Errorf("%s changed: %s -> %s", p, s, after[p])
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("%s created", p)
				}
			}
		})
	}
}
