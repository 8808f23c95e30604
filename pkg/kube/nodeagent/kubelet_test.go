package nodeagent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/locus-project/locus/pkg/cgroup"
)

// fakeKubelet plays the kubelet and containerd of a node that has none: it
// lays out pod and container cgroups on an ordinary directory the way they
// do (either driver, cgroup v1 or v2) and reports the containers running
// through the pod's status subresource. Paths are spelt out here, not
// taken from the package under test.
type fakeKubelet struct {
	t       testing.TB
	root    string
	v       cgroup.Version
	systemd bool
	cpus    string // the machine's CPUs, in the root cgroup
	stage   string // where a cgroup directory is filled before it appears (mkdir)
}

// Files as the kernel creates them. v1 memory has the Alibaba Cloud Linux /
// Anolis memory QoS files, v2 only the upstream ones, so both the written
// and the missing extension files are exercised.
var (
	v1Files = map[string]map[string]string{
		"cpuset": {"cpuset.cpus": "", "cpuset.mems": "", "cgroup.procs": "", "tasks": ""},
		"memory": {"memory.limit_in_bytes": "9223372036854771712", "memory.min": "0", "memory.low": "0",
			"memory.high": "9223372036854771712", "memory.wmark_ratio": "0", "memory.wmark_high": "9223372036854771712",
			"memory.wmark_min_adj": "0", "memory.wmark_scale_factor": "50", "cgroup.procs": "", "tasks": ""},
		"cpu":     {"cpu.cfs_quota_us": "-1", "cpu.cfs_period_us": "100000", "cpu.shares": "1024", "cpu.cfs_burst_us": "0", "cgroup.procs": ""},
		"cpuacct": {"cpuacct.usage": "0", "cgroup.procs": ""},
	}
	v2Files = map[string]string{"cgroup.controllers": "cpuset cpu memory", "cgroup.subtree_control": "cpuset cpu memory",
		"cgroup.procs": "", "cpuset.cpus": "", "cpuset.mems": "", "cpu.max": "max 100000", "cpu.weight": "100",
		"memory.min": "0", "memory.low": "0", "memory.high": "max", "memory.max": "max"}
)

func newFakeKubelet(t testing.TB, v cgroup.Version, systemd bool, cpus, mems string) *fakeKubelet {
	// The stage beside the root, under the same TMPDIR: one file system.
	k := &fakeKubelet{t: t, root: t.TempDir(), stage: t.TempDir(), v: v, systemd: systemd, cpus: cpus}
	for _, c := range k.controllers() {
		k.mkdir(c, "")
		k.set(c, "", "cpuset.cpus", cpus)
		k.set(c, "", "cpuset.mems", mems)
	}
	// The kubelet's QoS tiers exist before any pod.
	for _, tier := range []corev1.PodQOSClass{corev1.PodQOSBurstable, corev1.PodQOSBestEffort} {
		k.mkcg(k.tierCgroup(tier))
	}
	return k
}

func (k *fakeKubelet) controllers() []string {
	if k.v == cgroup.V2 {
		return []string{""}
	}
	return []string{"cpuset", "memory", "cpu", "cpuacct"}
}

func (k *fakeKubelet) tierCgroup(qos corev1.PodQOSClass) string {
	switch {
	case k.systemd && qos == corev1.PodQOSGuaranteed:
		return "kubepods.slice"
	case k.systemd:
		t := strings.ToLower(string(qos))
		return "kubepods.slice/kubepods-" + t + ".slice"
	case qos == corev1.PodQOSGuaranteed:
		return "kubepods"
	}
	return "kubepods/" + strings.ToLower(string(qos))
}

// PodCgroup is where the kubelet puts the pod.
func (k *fakeKubelet) PodCgroup(pod *corev1.Pod) string {
	tier := k.tierCgroup(pod.Status.QOSClass)
	if !k.systemd {
		return tier + "/pod" + string(pod.UID)
	}
	uid := strings.ReplaceAll(string(pod.UID), "-", "_")
	if pod.Status.QOSClass == corev1.PodQOSGuaranteed {
		return tier + "/kubepods-pod" + uid + ".slice"
	}
	t := strings.ToLower(string(pod.Status.QOSClass))
	return tier + "/kubepods-" + t + "-pod" + uid + ".slice"
}

// ContainerID is the ID containerd would give a container of the pod.
func ContainerID(pod *corev1.Pod, name string) string {
	sum := sha256.Sum256([]byte(string(pod.UID) + "/" + name))
	return hex.EncodeToString(sum[:])
}

// ContainerCgroup is where containerd puts the container.
func (k *fakeKubelet) ContainerCgroup(pod *corev1.Pod, name string) string {
	id := ContainerID(pod, name)
	if k.systemd {
		return k.PodCgroup(pod) + "/cri-containerd-" + id + ".scope"
	}
	return k.PodCgroup(pod) + "/" + id
}

// Run starts the pod: its cgroups, then the status a kubelet reports.
func (k *fakeKubelet) Run(ctx context.Context, pod *corev1.Pod) *corev1.Pod {
	k.t.Helper()
	pods := cp.Client.CoreV1().Pods(pod.Namespace)
	pod, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	k.mkcg(k.PodCgroup(pod))
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		k.mkcg(k.ContainerCgroup(pod, c.Name))
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "docker.io/library/" + c.Image, Ready: true,
			ContainerID: "containerd://" + ContainerID(pod, c.Name),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	pod, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if err != nil {
		k.t.Fatalf("set status of pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return pod
}

// Remove deletes the pod's cgroups, containers first, as the kubelet does
// once the pod is gone.
func (k *fakeKubelet) Remove(pod *corev1.Pod) {
	k.t.Helper()
	for _, c := range k.controllers() {
		k.rmcg(k.dir(c, k.PodCgroup(pod)))
	}
}

// rmcg removes the cgroup directory dir, its children first, each at once
// as the kernel's rmdir does: moved out of the tree whole (an inotify
// IN_MOVED_FROM in its parent, IN_MOVE_SELF in itself), since a directory
// emptied file by file let the agent find it still there with a file
// missing, a failed write it reports, where a cgroup removed is a write it
// lets pass. What is moved out stays in the stage until the test's end:
// deleted at once, its watch could be gone before the watcher, reading
// IN_MOVE_SELF, drops it (EINVAL, an error of the agent's watch no kernel
// gives). A dir already gone is nothing to do.
func (k *fakeKubelet) rmcg(dir string) {
	k.t.Helper()
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		k.t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			k.rmcg(filepath.Join(dir, e.Name()))
		}
	}
	gone, err := os.MkdirTemp(k.stage, "rm")
	if err != nil {
		k.t.Fatal(err)
	}
	if err := os.Rename(dir, filepath.Join(gone, "cg")); err != nil {
		k.t.Fatal(err)
	}
}

func (k *fakeKubelet) dir(c, rel string) string { return filepath.Join(k.root, c, rel) }

// knobDir is the v1 controller of a file ("" on v2).
func (k *fakeKubelet) knobDir(file string) string {
	if k.v == cgroup.V2 {
		return ""
	}
	return strings.SplitN(file, ".", 2)[0]
}

// File reads a cgroup file, "" when absent.
func (k *fakeKubelet) File(rel, file string) string {
	b, err := os.ReadFile(filepath.Join(k.dir(k.knobDir(file), rel), file))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// mkdir makes a cgroup directory with its files, as the kernel does: at
// once. It is filled beside the tree and renamed into place (an inotify
// IN_MOVED_TO, which the agent's watch reads as a creation), since a
// directory made first and filled after let the agent, woken by its event,
// find a file missing that no kernel leaves missing. A directory already
// there (a hierarchy's root) is filled in place.
func (k *fakeKubelet) mkdir(c, rel string) {
	k.t.Helper()
	files := v2Files
	if k.v == cgroup.V1 {
		files = v1Files[c]
	}
	dst := k.dir(c, rel)
	if _, err := os.Stat(dst); err == nil {
		for name, val := range files {
			k.set(c, rel, name, val)
		}
		return
	}
	tmp, err := os.MkdirTemp(k.stage, "cg")
	if err != nil {
		k.t.Fatal(err)
	}
	for name, val := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(val+"\n"), 0o644); err != nil {
			k.t.Fatal(err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's is 0700
		k.t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		k.t.Fatal(err)
	}
}

// mkcg creates a cgroup and its missing ancestors. v1 copies the parent's
// cpuset into a new cgroup; v2 leaves it empty (inherit), as the kernel does.
func (k *fakeKubelet) mkcg(rel string) {
	k.t.Helper()
	parts := strings.Split(rel, "/")
	for i := range parts {
		p, parent := strings.Join(parts[:i+1], "/"), strings.Join(parts[:i], "/")
		for _, c := range k.controllers() {
			if _, err := os.Stat(k.dir(c, p)); err == nil {
				continue
			}
			k.mkdir(c, p)
			if c == "cpuset" {
				k.set(c, p, "cpuset.cpus", k.get(c, parent, "cpuset.cpus"))
				k.set(c, p, "cpuset.mems", k.get(c, parent, "cpuset.mems"))
			}
		}
	}
}

func (k *fakeKubelet) set(c, rel, name, val string) {
	k.t.Helper()
	if err := os.WriteFile(filepath.Join(k.dir(c, rel), name), []byte(val+"\n"), 0o644); err != nil {
		k.t.Fatal(err)
	}
}

func (k *fakeKubelet) get(c, rel, name string) string {
	k.t.Helper()
	b, err := os.ReadFile(filepath.Join(k.dir(c, rel), name))
	if err != nil {
		k.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Mtimes records every file's modification time, to prove nothing was
// written.
func (k *fakeKubelet) Mtimes() map[string]int64 {
	out := map[string]int64{}
	_ = filepath.Walk(k.root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			out[p] = fi.ModTime().UnixNano()
		}
		return nil
	})
	return out
}
