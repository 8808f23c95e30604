package earlypin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/cgroup"
	"github.com/locus-project/locus/pkg/decide"
	"github.com/locus-project/locus/pkg/execute"
	"github.com/locus-project/locus/pkg/kube/podcgroup"
)

const cid = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// tree is a cgroup v2 tree of plain files with the pod cgroups named, each
// with one new container cid holding the CPUs 0-7 of memory node 0-1.
func tree(t *testing.T, pods ...string) (*cgroup.Hierarchy, *cgroup.MemoryStore, string) {
	t.Helper()
	root := t.TempDir()
	parent := map[string]string{"cgroup.controllers": "cpuset cpu memory", "cgroup.subtree_control": "cpuset cpu memory"}
	dirs := map[string]map[string]string{"": parent, "kubepods": parent}
	for _, p := range pods {
		dirs[p] = map[string]string{"cgroup.subtree_control": "cpuset cpu memory", "cpuset.cpus": "0-7", "cpuset.mems": "0-1"}
		dirs[p+"/"+cid] = map[string]string{"cgroup.procs": "", "cpuset.cpus": "0-7", "cpuset.mems": "0-1"}
		dirs[p+"/conmon"] = map[string]string{"cgroup.procs": "", "cpuset.cpus": "0-7", "cpuset.mems": "0-1"}
	}
	for dir, fs := range dirs {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range fs {
			if err := os.WriteFile(filepath.Join(root, dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	h, err := cgroup.Open(root, cgroup.V2)
	if err != nil {
		t.Fatal(err)
	}
	return h, cgroup.NewMemoryStore(), root
}

// early is the agent's executor's early path on h and store.
func early(t *testing.T, h *cgroup.Hierarchy, store cgroup.OriginalStore) *execute.Early {
	t.Helper()
	w, err := execute.NewEarly(h, store, false)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func cpuset(t *testing.T, root, cg string) (cpus, mems string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, cg, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	return read("cpuset.cpus"), read("cpuset.mems")
}

// A container appearing in a decided pod's directory gets the pod's
// cpuset; one of a pod the decision has no cpuset for (container scope,
// pinned by the kubelet), a directory not read as a container's, or any
// before the first decision keeps its own.
func TestCreated(t *testing.T) {
	h, store, root := tree(t, "kubepods/poda", "kubepods/podb")
	ew := early(t, h, store)
	p := New(nil)
	p.Created(filepath.Join(root, "kubepods/poda"), cid)
	if cpus, _ := cpuset(t, root, "kubepods/poda/"+cid); cpus != "0-7" {
		t.Fatalf("written before any decision: cpuset.cpus %s", cpus)
	}
	p.Follow(ew, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/poda": {Mems: "1", CPUs: "2-3"}})
	p.Created(filepath.Join(root, "kubepods/podb"), cid)
	p.Created(filepath.Join(root, "kubepods/poda"), "conmon")
	p.Created(filepath.Join(root, "kubepods/poda"), cid)
	if cpus, mems := cpuset(t, root, "kubepods/poda/"+cid); cpus != "2-3" || mems != "1" {
		t.Errorf("the decided pod's new container: cpuset.cpus %s, cpuset.mems %s; want 2-3, 1", cpus, mems)
	}
	for _, cg := range []string{"kubepods/podb/" + cid, "kubepods/poda/conmon"} {
		if cpus, mems := cpuset(t, root, cg); cpus != "0-7" || mems != "0-1" {
			t.Errorf("%s written: cpuset.cpus %s, cpuset.mems %s", cg, cpus, mems)
		}
	}
	if n := p.Written(); n != 1 {
		t.Errorf("Written %d, want 1", n)
	}
	// The values the runtime gave it are kept as its originals, so undoing
	// Locus gives them back; nothing else was recorded.
	for file, want := range map[string]string{"cpuset.cpus": "0-7", "cpuset.mems": "0-1"} {
		if got, ok := store.Original("kubepods/poda/" + cid + "/" + file); !ok || got != want {
			t.Errorf("original of %s: %q %v, want %q (keys %v)", file, got, ok, want, store.Keys())
		}
	}
	if keys := store.Keys(); len(keys) != 2 {
		t.Errorf("originals recorded: %v, want the new container's two files", keys)
	}
	// Without the agent's executor nothing is written early.
	q := New(nil)
	q.Follow(nil, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/podb": {Mems: "0", CPUs: "5"}})
	q.Created(filepath.Join(root, "kubepods/podb"), cid)
	if cpus, _ := cpuset(t, root, "kubepods/podb/"+cid); cpus != "0-7" || q.Written() != 0 {
		t.Errorf("written without the agent's executor: cpuset.cpus %s", cpus)
	}
}

// A container seen after its pod's directory was listed and before the
// pod's decision is written with the decision; one whose pod that decision
// leaves out is forgotten, so a later decision does not write it either.
func TestPending(t *testing.T) {
	h, store, root := tree(t, "kubepods/poda", "kubepods/podb")
	ew := early(t, h, store)
	p := New(nil)
	p.Follow(ew, podcgroup.Cgroupfs, nil)
	p.Created(filepath.Join(root, "kubepods/poda"), cid)
	p.Created(filepath.Join(root, "kubepods/podb"), cid)
	if cpus, _ := cpuset(t, root, "kubepods/poda/"+cid); cpus != "0-7" {
		t.Fatalf("written before its pod was decided: cpuset.cpus %s", cpus)
	}
	p.Follow(ew, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/poda": {Mems: "0", CPUs: "4"}})
	if cpus, mems := cpuset(t, root, "kubepods/poda/"+cid); cpus != "4" || mems != "0" {
		t.Errorf("once its pod was decided: cpuset.cpus %s, cpuset.mems %s; want 4, 0", cpus, mems)
	}
	p.Follow(ew, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/podb": {Mems: "0", CPUs: "5"}})
	if cpus, _ := cpuset(t, root, "kubepods/podb/"+cid); cpus != "0-7" {
		t.Errorf("a container left out of one decision was written by a later one: cpuset.cpus %s", cpus)
	}
	for i := range MaxPending + 10 {
		p.Created(filepath.Join(root, "kubepods/podc"), fmt.Sprintf("%064x", i))
	}
	p.Created(filepath.Join(root, "kubepods/podd"), cid)
	if p.npending != MaxPending {
		t.Errorf("%d pending, want at most %d", p.npending, MaxPending)
	}
}

// A container the snapshot found in a pod's directory before the pod was
// decided is written with the pod's decision; one found in a decided pod's
// is left to the reconcile, which lists it in its own writes.
func TestListed(t *testing.T) {
	h, store, root := tree(t, "kubepods/poda", "kubepods/podb")
	ew := early(t, h, store)
	p := New(nil)
	p.Follow(ew, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/podb": {Mems: "0", CPUs: "6"}})
	p.Listed(filepath.Join(root, "kubepods/poda"), []string{cid, "conmon"})
	p.Listed(filepath.Join(root, "kubepods/podb"), []string{cid})
	if cpus, _ := cpuset(t, root, "kubepods/poda/"+cid); cpus != "0-7" {
		t.Fatalf("written before its pod was decided: cpuset.cpus %s", cpus)
	}
	p.Follow(ew, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/poda": {Mems: "1", CPUs: "4"}, "kubepods/podb": {Mems: "0", CPUs: "6"}})
	if cpus, mems := cpuset(t, root, "kubepods/poda/"+cid); cpus != "4" || mems != "1" {
		t.Errorf("once its pod was decided: cpuset.cpus %s, cpuset.mems %s; want 4, 1", cpus, mems)
	}
	for _, cg := range []string{"kubepods/podb/" + cid, "kubepods/poda/conmon"} {
		if cpus, _ := cpuset(t, root, cg); cpus != "0-7" {
			t.Errorf("%s written: cpuset.cpus %s", cg, cpus)
		}
	}
}

// A pod's cpuset from the last decision is found by its UID, whatever its
// QoS tier and under the kubelet's cgroup root, for both drivers; a UID not
// in the UUID form, a pod the decision has no cpuset for, or any before the
// first decision is not found.
func TestPodCPUSet(t *testing.T) {
	const uid = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
	for _, tc := range []struct {
		name   string
		driver podcgroup.Driver
		root   podcgroup.Root
		cg     string // the decided pod's cgroup
	}{
		{"cgroupfs burstable", podcgroup.Cgroupfs, nil, "kubepods/burstable/pod" + uid},
		{"cgroupfs guaranteed under a root", podcgroup.Cgroupfs, podcgroup.Root{"kubelet"}, "kubelet/kubepods/pod" + uid},
		{"systemd besteffort", podcgroup.Systemd, nil, "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, store, _ := tree(t)
			ew := early(t, h, store)
			p := New(nil)
			if _, ok := p.PodCPUSet(tc.root, uid); ok {
				t.Fatal("found before any decision")
			}
			want := decide.PodCPUSet{Mems: "1", CPUs: "4-7"}
			p.Follow(ew, tc.driver, map[string]decide.PodCPUSet{tc.cg: want, "kubepods/podother": {Mems: "0", CPUs: "1"}})
			if got, ok := p.PodCPUSet(tc.root, uid); !ok || got != want {
				t.Errorf("PodCPUSet = %+v %v, want %+v", got, ok, want)
			}
			for _, bad := range []string{"", "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", "../" + uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f1"} {
				if got, ok := p.PodCPUSet(tc.root, bad); ok {
					t.Errorf("UID %q found: %+v", bad, got)
				}
			}
		})
	}
}

// With the agent's file store a decided pod's cgroup is marked, durably,
// before any of its containers is written early; a container's original is
// its pod's, kept in memory until the agent's next save, so that the write
// does not wait for the disk. A pod whose mark cannot be saved is left to
// the reconcile.
func TestCreatedWithTheAgentsStore(t *testing.T) {
	h, _, root := tree(t, "kubepods/poda", "kubepods/podb")
	path := filepath.Join(t.TempDir(), "originals.json")
	store, err := cgroup.OpenFileStore(path)
	if err != nil {
		t.Fatal(err)
	}
	ew := early(t, h, store)
	p := New(nil)
	p.Follow(ew, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/poda": {Mems: "1", CPUs: "2-3"}})
	onDisk := func() *cgroup.FileStore {
		s, err := cgroup.OpenFileStore(path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if m := onDisk().CgroupMark("kubepods/poda/" + cid); m != cgroup.ChildrenFromParent {
		t.Fatalf("the decided pod's containers on disk are marked %q, want %q", m, cgroup.ChildrenFromParent)
	}
	p.Created(filepath.Join(root, "kubepods/poda"), cid)
	if cpus, mems := cpuset(t, root, "kubepods/poda/"+cid); cpus != "2-3" || mems != "1" {
		t.Fatalf("the decided pod's new container: cpuset.cpus %s, cpuset.mems %s; want 2-3, 1", cpus, mems)
	}
	key := "kubepods/poda/" + cid + "/cpuset.cpus"
	if got, ok := store.Original(key); !ok || got != "0-7" {
		t.Errorf("original in memory: %q %v, want 0-7", got, ok)
	}
	if _, ok := onDisk().Original(key); ok {
		t.Error("the early write waited for its original to be saved")
	}
	// A container the runtime created with the pod's cpuset already (NRI)
	// needs no write, and still gets the pod's original, not Locus's value.
	const nri = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	dir := filepath.Join(root, "kubepods/poda", nri)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"cgroup.procs": "", "cpuset.cpus": "2-3", "cpuset.mems": "1"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.Created(filepath.Join(root, "kubepods/poda"), nri)
	if got, ok := store.Original("kubepods/poda/" + nri + "/cpuset.cpus"); !ok || got != "0-7" {
		t.Errorf("original of the container created pinned: %q %v, want the pod's 0-7", got, ok)
	}
	if err := store.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, ok := onDisk().Original(key); !ok || got != "0-7" {
		t.Errorf("original on disk after Flush: %q %v, want 0-7", got, ok)
	}

	// The directory of the store's file gone: the new pod's mark cannot be
	// saved, so its container keeps its cpuset until the reconcile.
	if err := os.RemoveAll(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	p.Follow(ew, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/poda": {Mems: "1", CPUs: "2-3"}, "kubepods/podb": {Mems: "0", CPUs: "5"}})
	p.Created(filepath.Join(root, "kubepods/podb"), cid)
	if cpus, _ := cpuset(t, root, "kubepods/podb/"+cid); cpus != "0-7" {
		t.Errorf("written early without its pod's mark on disk: cpuset.cpus %s", cpus)
	}
}

// Follow returns the directories of the pods it did not know, for the
// caller to watch (a pod decided before its cgroup was made, whose cgroup
// may have appeared meanwhile), and Awaits names every decided pod's.
func TestFollowNamesNewPods(t *testing.T) {
	h, store, root := tree(t, "kubepods/poda", "kubepods/podb")
	ew := early(t, h, store)
	p := New(nil)
	a, b := filepath.Join(root, "kubepods/poda"), filepath.Join(root, "kubepods/podb")
	set := decide.PodCPUSet{Mems: "1", CPUs: "2-3"}
	fresh := p.Follow(ew, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/poda": set})
	if len(fresh) != 1 || fresh[0] != a || !p.Awaits(a) || p.Awaits(b) {
		t.Fatalf("first decision: new %v, awaits a %v, b %v; want [%s], true, false", fresh, p.Awaits(a), p.Awaits(b), a)
	}
	fresh = p.Follow(ew, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/poda": set, "kubepods/podb": set})
	if len(fresh) != 1 || fresh[0] != b || !p.Awaits(b) {
		t.Fatalf("second decision: new %v, want [%s]", fresh, b)
	}
	if fresh = p.Follow(ew, podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/podb": set}); len(fresh) != 0 || p.Awaits(a) {
		t.Fatalf("third decision, a gone: new %v, awaits a %v", fresh, p.Awaits(a))
	}
}

// On cgroup v1 a container cgroup seen as it appears holds empty cpusets
// until the runtime, having read them empty, writes its parent's values into
// them. A write of the pod's cpuset in between would be overwritten: the
// container is written only once both files are filled, and ends on its
// pod's cpuset. One filled already is written at once.
func TestWaitsForTheRuntimesCopy(t *testing.T) {
	root := t.TempDir()
	pod := filepath.Join(root, "cpuset", "kubepods", "poda")
	files := func(dir string, fs map[string]string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range fs {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files(pod, map[string]string{"cpuset.cpus": "0-7", "cpuset.mems": "0-1"})
	const other = "1111111111111111111111111111111111111111111111111111111111111111"
	files(filepath.Join(pod, cid), map[string]string{"cpuset.cpus": "", "cpuset.mems": "", "cgroup.procs": ""})
	files(filepath.Join(pod, other), map[string]string{"cpuset.cpus": "0-7", "cpuset.mems": "0-1", "cgroup.procs": ""})
	h, err := cgroup.Open(root, cgroup.V1)
	if err != nil {
		t.Fatal(err)
	}
	p := New(nil)
	p.Follow(early(t, h, cgroup.NewMemoryStore()), podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/poda": {Mems: "1", CPUs: "2-3"}})
	read := func(name, file string) string {
		b, _ := os.ReadFile(filepath.Join(pod, name, file))
		return strings.TrimSpace(string(b))
	}
	p.Created(pod, other)
	if got := read(other, "cpuset.cpus"); got != "2-3" {
		t.Errorf("a container filled already: cpuset.cpus %q, want 2-3 at once", got)
	}
	p.Created(pod, cid) // the runtime has read the empty files
	time.Sleep(20 * time.Millisecond)
	files(filepath.Join(pod, cid), map[string]string{"cpuset.cpus": "0-7"}) // the runtime's copy
	time.Sleep(20 * time.Millisecond)
	files(filepath.Join(pod, cid), map[string]string{"cpuset.mems": "0-1"})
	deadline := time.Now().Add(SettleWait + time.Second)
	for (read(cid, "cpuset.cpus") != "2-3" || read(cid, "cpuset.mems") != "1" || p.Written() != 2) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if cpus, mems := read(cid, "cpuset.cpus"), read(cid, "cpuset.mems"); cpus != "2-3" || mems != "1" {
		t.Fatalf("after the runtime's copy: cpuset.cpus %q, cpuset.mems %q; want the pod's 2-3, 1", cpus, mems)
	}
	if n := p.Written(); n != 2 {
		t.Errorf("Written %d, want 2", n)
	}
}

// The pods' directories kept from one decision to the next are another
// hierarchy's once the writer's hierarchy changed: the pods are resolved
// anew there, and a container appearing in the new tree is written, not
// one in the old. A pod's cgroup changed is a key of its own, resolved
// as it comes.
func TestFollowResolvesAnewOnAnotherHierarchy(t *testing.T) {
	h1, store1, root1 := tree(t, "kubepods/poda")
	h2, store2, root2 := tree(t, "kubepods/poda", "kubepods/podb")
	set := decide.PodCPUSet{Mems: "1", CPUs: "2-3"}
	p := New(nil)
	p.Follow(early(t, h1, store1), podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/poda": set})
	if !p.Awaits(filepath.Join(root1, "kubepods/poda")) {
		t.Fatal("the first tree's pod is not awaited")
	}
	fresh := p.Follow(early(t, h2, store2), podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/poda": set})
	a1, a2 := filepath.Join(root1, "kubepods/poda"), filepath.Join(root2, "kubepods/poda")
	if p.Awaits(a1) || !p.Awaits(a2) || len(fresh) != 1 || fresh[0] != a2 {
		t.Fatalf("after the writer's hierarchy changed: awaits old %v, new %v; new pods %v, want [%s]", p.Awaits(a1), p.Awaits(a2), fresh, a2)
	}
	p.Created(a2, cid)
	if cpus, mems := cpuset(t, root2, "kubepods/poda/"+cid); cpus != "2-3" || mems != "1" {
		t.Errorf("the new tree's container: cpuset.cpus %s, cpuset.mems %s; want 2-3, 1", cpus, mems)
	}
	fresh = p.Follow(early(t, h2, store2), podcgroup.Cgroupfs, map[string]decide.PodCPUSet{"kubepods/podb": set})
	if b := filepath.Join(root2, "kubepods/podb"); !p.Awaits(b) || p.Awaits(a2) || len(fresh) != 1 || fresh[0] != b {
		t.Fatalf("the pod's cgroup changed: awaits %s %v, the old %v; new pods %v", b, p.Awaits(b), p.Awaits(a2), fresh)
	}
}
