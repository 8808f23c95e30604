package topology

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// The sysfs readers and the topology JSON (locus plan --topology, and what a
// NodeResourceTopology is checked against) read text Locus does not write.

func FuzzParseNodeList(f *testing.F) {
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, s string) {
		var ids []int
		var err error
		fuzzseed.Timed(t, "ParseNodeList", func() { ids, err = ParseNodeList(s) })
		fuzzseed.CheckError(t, err, "node list")
		if err != nil {
			return
		}
		if len(ids) > MaxNodeID+1 || !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Fatalf("ParseNodeList(%.100q) = %v: not sorted distinct ids within bounds", s, ids)
		}
		if len(ids) > 0 && (ids[0] < 0 || ids[len(ids)-1] > MaxNodeID) {
			t.Fatalf("ParseNodeList(%.100q) = %v: id out of range", s, ids)
		}
	})
}

// FuzzTopologyJSON: whatever decodes is valid and writes back to itself.
func FuzzTopologyJSON(f *testing.F) {
	f.Add(`{"cpus":[{"id":0,"core":0,"socket":0,"die":0,"numa":0,"l3":0}],"numaNodes":[{"id":0,"cpus":"0","distances":[10]}],"isolated":""}`)
	f.Add(`{"cpus":[{"id":0,"numa":0,"l3":-1},{"id":1,"core":1,"numa":1,"l3":-1}],"numaNodes":[{"id":0,"cpus":"0","distances":[10,20]},{"id":1,"cpus":"1","distances":[20,10]}],"isolated":"1"}`)
	fuzzseed.Add(f, func(s string) string {
		return `{"cpus":[{"id":0,"numa":0}],"numaNodes":[{"id":0,"cpus":` + strconv.Quote(s) + `,"distances":[10]}],"isolated":` + strconv.Quote(s) + `}`
	})
	f.Add(`{"cpus":[{"id":0,"numa":0,"l3":-1}],"numaNodes":[{"id":0,"cpus":"0","distances":[10]}],` +
		`"devices":[{"address":"0000:18:00.0","class":"0x020000","vendor":"0x8086","device":"0x159b","numa":0},` +
		`{"address":"10000:af:1f.7","class":"0x030200","vendor":"0x10de","device":"0x20b5","numa":-1}]}`)
	fuzzseed.Add(f, func(s string) string {
		return `{"cpus":[{"id":0,"numa":0}],"numaNodes":[{"id":0,"cpus":"0","distances":[10]}],` +
			`"devices":[{"address":` + strconv.Quote(s) + `,"class":` + strconv.Quote(s) + `,"vendor":"0x8086","device":"0x159b","numa":0}]}`
	})
	fuzzseed.Add(f, func(s string) string {
		return `{"cpus":[{"id":0,"numa":0}],"numaNodes":[{"id":0,"cpus":"0","distances":[10]}],` +
			`"devices":[{"address":"0000:18:00.0","class":"0x020000","vendor":"0x8086","device":"0x159b","numa":0,"heldBy":[` + strconv.Quote(s) + `]}]}`
	})
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var topo Topology
		var err error
		fuzzseed.Timed(t, "Topology.UnmarshalJSON", func() { err = json.Unmarshal([]byte(raw), &topo) })
		fuzzseed.CheckError(t, err)
		if err != nil {
			return
		}
		if err := topo.Validate(); err != nil {
			t.Fatalf("decoded an invalid topology: %v", err)
		}
		out, err := json.Marshal(topo)
		if err != nil {
			t.Fatal(err)
		}
		var again Topology
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("cannot read back %s: %v", out, err)
		}
		if out2, _ := json.Marshal(again); string(out2) != string(out) {
			t.Fatalf("round trip changed\n%s\nto\n%s", out, out2)
		}
	})
}

// FuzzNodeMeminfo feeds one node's meminfo file.
func FuzzNodeMeminfo(f *testing.F) {
	f.Add("Node 0 MemTotal:       16318464 kB\nNode 0 MemFree:        1000 kB\n")
	f.Add("Node 0 MemTotal: 18446744073709551615 kB\nNode 0 MemFree: 9007199254740992 kB\n")
	fuzzseed.Add(f, func(s string) string { return "Node 0 MemTotal: " + s + " kB\nNode 0 MemFree: 1 kB\n" })
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		path := writeFile(t, dir, "meminfo", text)
		var total, free uint64
		var err error
		fuzzseed.Timed(t, "readNodeMeminfo", func() { total, free, err = readNodeMeminfo(path) })
		fuzzseed.CheckError(t, err, path)
		// Counts in kB up to 2^53 are taken; times 1024 they must not wrap.
		if err == nil && (total > 1<<63 || free > 1<<63) {
			t.Fatalf("total %d, free %d: wrapped", total, free)
		}
	})
}

// FuzzHugePages feeds one pool's page counts.
func FuzzHugePages(f *testing.F) {
	f.Add("8\n", "6\n")
	f.Add("268435457", "0")
	f.Add("-1", "0")
	for _, s := range fuzzseed.Texts() {
		f.Add(s, "0")
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, total, free string) {
		pool := filepath.Join(dir, "node0", "hugepages", "hugepages-2048kB")
		if err := os.MkdirAll(pool, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, pool, "nr_hugepages", total)
		writeFile(t, pool, "free_hugepages", free)
		var got []HugePages
		var err error
		fuzzseed.Timed(t, "readHugePages", func() { got, err = readHugePages(filepath.Join(dir, "node0")) })
		fuzzseed.CheckError(t, err, pool)
		if err == nil && (len(got) != 1 || got[0].Free > got[0].Total || got[0].Bytes(got[0].Total) > 1<<50) {
			t.Fatalf("pools %+v from %q, %q", got, total, free)
		}
	})
}

// FuzzDistances feeds one node's distance row.
func FuzzDistances(f *testing.F) {
	f.Add("10 20\n", 2)
	f.Add("10 -1", 2)
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, text string, want int) {
		want = min(max(want, 0), MaxNodeID+1)
		path := writeFile(t, t.TempDir(), "distance", text)
		var row []int
		var err error
		fuzzseed.Timed(t, "readDistances", func() { row, err = readDistances(path, want) })
		fuzzseed.CheckError(t, err, path)
		if err != nil {
			return
		}
		if len(row) != want || slices.ContainsFunc(row, func(d int) bool { return d < 0 }) {
			t.Fatalf("readDistances(%.100q, %d) = %v", text, want, row)
		}
	})
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
