package podcgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

func TestParseRoot(t *testing.T) {
	for in, want := range map[string]Root{
		"": nil, "/": nil, "//": nil, "/kubelet": {"kubelet"}, "kubelet/": {"kubelet"}, "/kubelet.slice": {"kubelet"},
		"/a/b": {"a", "b"}, "/a.slice/a-b.slice": {"a", "b"}, "/kube-root": {"kube-root"},
	} {
		got, err := ParseRoot(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseRoot(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"/..", "/kubelet/..", "/a//b", "/./a", "/a b", "/a\x00", "/x.slice/y-b.slice", "/.slice", "/a/ /b"} {
		if r, err := ParseRoot(in); err == nil {
			t.Errorf("ParseRoot(%q) = %v, want an error", in, r)
		}
	}
}

// TestRootPath: the kubelet's own spelling for both drivers, checked
// against paths seen on kind (systemd) and a cgroupfs kubelet.
func TestRootPath(t *testing.T) {
	const uid = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
	id := ContainerID{Runtime: Containerd, ID: strings.Repeat("ab", 32)}
	kind := Root{"kubelet"}
	for _, tc := range []struct {
		d    Driver
		qos  string
		r    Root
		want string
	}{
		{Systemd, Burstable, kind, "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/" +
			"kubelet-kubepods-burstable-pod1b4e28ba_2fa1_11d2_883f_0016d3cca427.slice/cri-containerd-" + id.ID + ".scope"},
		{Systemd, Guaranteed, Root{"a", "b"}, "a.slice/a-b.slice/a-b-kubepods.slice/a-b-kubepods-pod1b4e28ba_2fa1_11d2_883f_0016d3cca427.slice/cri-containerd-" + id.ID + ".scope"},
		{Cgroupfs, BestEffort, kind, "kubelet/kubepods/besteffort/pod" + uid + "/" + id.ID},
		{Cgroupfs, Guaranteed, nil, "kubepods/pod" + uid + "/" + id.ID},
	} {
		pod, err := PodCgroup(tc.d, tc.qos, uid)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ContainerCandidates(tc.d, pod, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.r.Path(c[0]); got != tc.want {
			t.Errorf("%s %s under %v:\n got %s\nwant %s", tc.d, tc.qos, tc.r, got, tc.want)
		}
		if !strings.HasPrefix(tc.r.Path(c[0]), tc.r.Path(pod)+"/") {
			t.Errorf("%s: container %s not under its pod %s", tc.d, tc.r.Path(c[0]), tc.r.Path(pod))
		}
	}
}

// tree makes a fake cgroup hierarchy holding dirs.
func tree(t *testing.T, dirs ...string) (exists func(string) bool, children func(string) ([]string, error)) {
	root := t.TempDir()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exists = func(rel string) bool {
		fi, err := os.Stat(filepath.Join(root, rel))
		return err == nil && fi.IsDir()
	}
	children = func(rel string) ([]string, error) {
		ents, err := os.ReadDir(filepath.Join(root, rel))
		var out []string
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, e.Name())
			}
		}
		return out, err
	}
	return exists, children
}

func TestFindRoot(t *testing.T) {
	for name, tc := range map[string]struct {
		dirs  []string
		want  Root
		ok    bool
		found []string
	}{
		"top cgroupfs":    {[]string{"kubepods/burstable", "kubelet"}, nil, true, []string{"/"}},
		"top systemd":     {[]string{"kubepods.slice", "system.slice"}, nil, true, []string{"/"}},
		"kind cgroupfs":   {[]string{"kubelet/kubepods/besteffort", "system.slice", "init.scope"}, Root{"kubelet"}, true, []string{"/kubelet"}},
		"kind systemd":    {[]string{"kubelet.slice/kubelet-kubepods.slice", "system.slice/kubepods.slice.d"}, Root{"kubelet"}, true, []string{"/kubelet.slice"}},
		"not started":     {[]string{"system.slice", "user.slice"}, nil, false, nil},
		"two candidates":  {[]string{"a/kubepods", "b/kubepods"}, nil, false, []string{"/a", "/b"}},
		"slice not named": {[]string{"kubelet.slice/kubepods.slice"}, nil, false, nil},
	} {
		exists, children := tree(t, tc.dirs...)
		got, found, ok := FindRoot(exists, children)
		if ok != tc.ok || !slices.Equal(got, tc.want) || !slices.Equal(found, tc.found) {
			t.Errorf("%s: FindRoot = %v, %v, %v; want %v, %v, %v", name, got, found, ok, tc.want, tc.found, tc.ok)
		}
	}
}

// TestRootExists: the driver is told, and a pod found, through the root.
func TestRootExists(t *testing.T) {
	const uid = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"
	exists, _ := tree(t, "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod"+
		strings.ReplaceAll(uid, "-", "_")+".slice")
	under := Root{"kubelet"}.Exists(exists)
	d, ok := DetectDriver(under)
	if !ok || d != Systemd {
		t.Fatalf("DetectDriver under the root = %v, %v", d, ok)
	}
	pod, _ := PodCgroup(d, BestEffort, uid)
	if !under(pod) || exists(pod) {
		t.Fatalf("pod cgroup %s: under the root %v, at the top %v", pod, under(pod), exists(pod))
	}
}

func FuzzParseRoot(f *testing.F) {
	for _, s := range []string{"/kubelet", "/a.slice/a-b.slice", "/../x", "/a/./b", strings.Repeat("/a", 5000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRoot(s)
		fuzzseed.CheckError(t, err, "level", "slice")
		if err != nil {
			return
		}
		for _, rel := range []string{"kubepods/pod1", "kubepods.slice/kubepods-pod1.slice/x.scope"} {
			p := r.Path(rel)
			for _, c := range strings.Split(p, "/") {
				if c == "" || c == "." || c == ".." {
					t.Fatalf("root %q puts %s at %q", s, rel, p)
				}
			}
		}
		again, err := ParseRoot(r.String())
		if err != nil || !slices.Equal(again, r) {
			t.Fatalf("%q reads as %v, which writes %q, which reads as %v, %v", s, r, r.String(), again, err)
		}
	})
}
