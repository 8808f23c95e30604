package kubeletstate

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	v1 "k8s.io/api/core/v1"
	cpustate "k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/state"
	memstate "k8s.io/kubernetes/pkg/kubelet/cm/memorymanager/state"
	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/kubelet"
)

const committed = "../../pkg/kubelet/testdata/checkpoints"

// TestFixturesAreTheKubelets writes the fixtures again with the kubelet's
// state packages and compares them with the ones pkg/kubelet's tests read.
func TestFixturesAreTheKubelets(t *testing.T) {
	dir := t.TempDir()
	if err := WriteAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range Fixtures {
		fresh, err := os.ReadFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		old, err := os.ReadFile(filepath.Join(committed, f.Name))
		if err != nil {
			t.Fatalf("%v: run go run ./cmd/kubelet-checkpoints", err)
		}
		if !bytes.Equal(fresh, old) {
			t.Errorf("%s differs from what the kubelet writes:\n%s\nwant\n%s\n(go run ./cmd/kubelet-checkpoints)", f.Name, old, fresh)
		}
	}
	entries, _ := os.ReadDir(committed)
	if len(entries) != len(Fixtures) {
		t.Errorf("%s holds %d files, the kubelet writes %d", committed, len(entries), len(Fixtures))
	}
}

// kubeletReadsCPU is the kubelet's restoreState without its side effects:
// v1 first, then v2, each with its checksum, then every CPU list parsed.
func kubeletReadsCPU(raw []byte) error {
	c1 := &cpustate.CPUManagerCheckpointV1{Entries: map[string]string{}}
	if err := c1.UnmarshalCheckpoint(raw); err == nil {
		if err := c1.VerifyChecksum(); err == nil {
			return parseLists(c1.DefaultCPUSet, c1.Entries)
		}
	}
	c2 := cpustate.NewCPUManagerCheckpoint()
	if err := c2.UnmarshalCheckpoint(raw); err != nil {
		return err
	}
	if err := c2.VerifyChecksum(); err != nil {
		return err
	}
	for _, cs := range c2.Entries {
		if err := parseLists("", cs); err != nil {
			return err
		}
	}
	return parseLists(c2.DefaultCPUSet, nil)
}

func parseLists(def string, m map[string]string) error {
	if _, err := cpuset.Parse(def); err != nil {
		return err
	}
	for _, s := range m {
		if _, err := cpuset.Parse(s); err != nil {
			return err
		}
	}
	return nil
}

func kubeletReadsMemory(raw []byte) error {
	cp := memstate.NewMemoryManagerCheckpoint()
	if err := cp.UnmarshalCheckpoint(raw); err != nil {
		return err
	}
	return cp.VerifyChecksum()
}

var names = []string{"a", "B", "b", "b-1", "app", "ø", "x y", "z\u00e9", "0", "10", "9"}

func randomCPU(r *rand.Rand) *cpustate.CPUManagerCheckpoint {
	cp := cpustate.NewCPUManagerCheckpoint()
	cp.PolicyName = []string{"none", "static", "Static", ""}[r.Intn(4)]
	cp.DefaultCPUSet = randomSet(r).String()
	for i := r.Intn(5); i > 0; i-- {
		cs := map[string]string{}
		for j := r.Intn(4); j > 0; j-- {
			cs[names[r.Intn(len(names))]] = randomSet(r).String()
		}
		cp.Entries[fmt.Sprintf("%08x-%s", r.Uint32(), names[r.Intn(len(names))])] = cs
	}
	return cp
}

func randomSet(r *rand.Rand) cpuset.CPUSet {
	var ids []int
	for i := r.Intn(6); i > 0; i-- {
		ids = append(ids, r.Intn(128))
	}
	return cpuset.New(ids...)
}

func randomMemory(r *rand.Rand) *memstate.MemoryManagerCheckpoint {
	cp := memstate.NewMemoryManagerCheckpoint()
	cp.PolicyName = []string{"None", "Static"}[r.Intn(2)]
	for n := r.Intn(4); n > 0; n-- {
		if r.Intn(5) == 0 {
			cp.MachineState[r.Intn(8)] = nil
			continue
		}
		st := &memstate.NUMANodeState{NumberOfAssignments: r.Intn(3)}
		if r.Intn(3) > 0 {
			st.MemoryMap = map[v1.ResourceName]*memstate.MemoryTable{}
			for _, res := range []v1.ResourceName{"memory", "hugepages-2Mi", "hugepages-1Gi"}[:r.Intn(3)+1] {
				if r.Intn(4) == 0 {
					st.MemoryMap[res] = nil
				} else {
					st.MemoryMap[res] = &memstate.MemoryTable{TotalMemSize: r.Uint64(), Free: uint64(r.Intn(1000))}
				}
			}
		}
		if r.Intn(3) > 0 {
			st.Cells = []int{}
			for c := r.Intn(3); c > 0; c-- {
				st.Cells = append(st.Cells, r.Intn(8))
			}
		}
		cp.MachineState[r.Intn(8)] = st
	}
	for p := r.Intn(3); p > 0; p-- {
		cs := map[string][]memstate.Block{}
		for c := r.Intn(3); c > 0; c-- {
			var bs []memstate.Block
			for b := r.Intn(3); b > 0; b-- {
				bs = append(bs, memstate.Block{NUMAAffinity: []int{r.Intn(8)}, Type: "memory", Size: r.Uint64() >> 14})
			}
			cs[names[r.Intn(len(names))]] = bs
		}
		cp.Entries[fmt.Sprintf("%08x", r.Uint32())] = cs
	}
	return cp
}

// TestLocusVerifiesAsTheKubelet: on checkpoints the kubelet's own types
// marshal (random contents, nil maps, slices and pointers included), and
// on the same with one byte changed, pkg/kubelet accepts exactly what the
// kubelet accepts. Locus's bounds refuse no checkpoint of this size: its
// blocks are under the 1 PiB a block may hold (randomMemory's sizes), as
// every real machine's are.
func TestLocusVerifiesAsTheKubelet(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	accepted, refused := 0, 0
	for i := 0; i < 3000; i++ {
		var raw []byte
		var err error
		memory := i%2 == 1
		if memory {
			raw, err = randomMemory(r).MarshalCheckpoint()
		} else {
			raw, err = randomCPU(r).MarshalCheckpoint()
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range [][]byte{raw, mutate(r, raw)} {
			var kErr, lErr error
			if memory {
				kErr, lErr = kubeletReadsMemory(b), parseMemory(b)
			} else {
				kErr, lErr = kubeletReadsCPU(b), parseCPU(b)
			}
			if (kErr == nil) != (lErr == nil) {
				t.Fatalf("%s\nkubelet: %v\nlocus: %v", b, kErr, lErr)
			}
			if kErr == nil {
				accepted++
			} else {
				refused++
			}
		}
	}
	t.Logf("%d accepted, %d refused by both", accepted, refused)
	if accepted < 3000 || refused < 1000 {
		t.Fatalf("%d accepted, %d refused: the test lost its power", accepted, refused)
	}
}

func parseCPU(b []byte) error    { _, err := kubelet.ParseCPUManager(b); return err }
func parseMemory(b []byte) error { _, err := kubelet.ParseMemoryManager(b); return err }

// mutate changes one byte of a checkpoint to another byte the JSON may hold.
func mutate(r *rand.Rand, raw []byte) []byte {
	out := bytes.Clone(raw)
	const alphabet = `0123456789-,abcAB":{}[] n`
	out[r.Intn(len(out))] = alphabet[r.Intn(len(alphabet))]
	return out
}

// TestChecksumZeroAsTheKubelet: a checkpoint whose checksum is 0 is read
// as kubelet v1.33 reads it. The CPU manager's VerifyChecksum accepts a 0
// unchecked, in v1 and v2 alike ("for compatibility with old file
// backend"), so whoever can write the file can write any content under a
// 0; the memory manager's compares a 0 like any other checksum. Locus
// accepts and refuses the very same files.
func TestChecksumZeroAsTheKubelet(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	zero := regexp.MustCompile(`"checksum":[0-9]+`)
	cpuAccepted, memRefused := 0, 0
	for i := 0; i < 1000; i++ {
		var raw []byte
		var err error
		memory := i%2 == 1
		if memory {
			raw, err = randomMemory(r).MarshalCheckpoint()
		} else {
			raw, err = randomCPU(r).MarshalCheckpoint()
		}
		if err != nil {
			t.Fatal(err)
		}
		// A byte changed under a 0 can make a list name a CPU beyond any
		// machine's, which Locus refuses where the kubelet's parse does
		// not (its state check then does): there Locus only refuses more.
		for j, b := range [][]byte{zero.ReplaceAll(raw, []byte(`"checksum":0`)), zero.ReplaceAll(mutate(r, raw), []byte(`"checksum":0`))} {
			var kErr, lErr error
			if memory {
				kErr, lErr = kubeletReadsMemory(b), parseMemory(b)
			} else {
				kErr, lErr = kubeletReadsCPU(b), parseCPU(b)
			}
			if (kErr == nil) != (lErr == nil) && (j == 0 || lErr == nil) {
				t.Fatalf("%s\nkubelet: %v\nlocus: %v", b, kErr, lErr)
			}
			switch {
			case !memory && kErr == nil:
				cpuAccepted++
			case memory && kErr != nil:
				memRefused++
			}
		}
	}
	v1 := []byte(`{"policyName":"static","defaultCpuSet":"0-3","entries":{"c0ffee":"4-7"},"checksum":0}`)
	if kErr, lErr := kubeletReadsCPU(v1), parseCPU(v1); kErr != nil || lErr != nil {
		t.Fatalf("a v1 checkpoint with checksum 0: kubelet %v, locus %v", kErr, lErr)
	}
	t.Logf("checksum 0: %d CPU checkpoints accepted, %d memory checkpoints refused, by both", cpuAccepted, memRefused)
	if cpuAccepted < 500 || memRefused < 900 {
		t.Fatalf("%d CPU accepted, %d memory refused: the test lost its power", cpuAccepted, memRefused)
	}
}
