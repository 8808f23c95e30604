package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/locus-project/locus/pkg/status"
	"github.com/locus-project/locus/pkg/topology"
	"github.com/locus-project/locus/pkg/topology/fixture"
	"github.com/locus-project/locus/pkg/view"
)

// /ui shows each node's memory held and its huge pages, on the node that
// has them only; the snapshot `locus top` reads carries them and each
// workload's cpuset.mems.
func TestUIShowsMemoryByNode(t *testing.T) {
	shape := fixture.Shape{Name: "unequal-huge", Sockets: 2, NUMAPerSocket: 1, L3PerNUMA: 1, CoresPerSocket: 2,
		ThreadsPerCore: 1, Siblings: fixture.SiblingsSplit, MemoryPerNode: 8 << 30, MemoryByNode: map[int]uint64{1: 32 << 30},
		HugePages: []fixture.NodeHugePages{{Node: 1, HugePages: topology.HugePages{SizeKiB: topology.HugePages2MiKiB, Total: 64, Free: 16}}}}
	sys := filepath.Join(t.TempDir(), "sys")
	if err := fixture.WriteSysfs(shape, sys); err != nil {
		t.Fatal(err)
	}
	st := status.Status{Time: time.Now(), Node: status.NodeStatus{Exclusive: "2"}, Workloads: []status.WorkloadStatus{
		{Name: "db", Pool: "exclusive", CPUs: "2", Mems: "0-1", NUMANodes: []int{1}}}}
	s, err := Start(Config{Addr: "127.0.0.1:0", Metrics: prometheus.NewRegistry(), Health: &Health{},
		Status: func() status.Status { return st }, ConfigName: func() string { return "test" },
		Log: slog.New(slog.DiscardHandler), SysfsRoot: sys, ProcRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	page := get(t, s.Addr(), "/ui")
	huge := regexp.MustCompile(`class="dim hugepages" data-node="(\d+)" data-size-kib="(\d+)"[^>]*>([^<]*)<`).FindAllStringSubmatch(page, -1)
	if len(huge) != 1 || huge[0][1] != "1" || huge[0][2] != "2048" || huge[0][3] != "2MiB huge pages 48 held, 16 free of 64 (128.0 MiB)" {
		t.Errorf("/ui huge page lines %q, want node 1's 2MiB pool only", huge)
	}
	var snap view.Snapshot
	if err := json.Unmarshal([]byte(get(t, s.Addr(), "/ui/snapshot.json")), &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Workloads) != 1 || !slices.Equal(snap.Workloads[0].MemNodes, []int{0, 1}) {
		t.Errorf("snapshot workloads %+v, want db with memNodes [0 1]", snap.Workloads)
	}
	if n := snap.Topology.Nodes; len(n) != 2 || n[0].HugePages != nil || len(n[1].HugePages) != 1 {
		t.Errorf("snapshot nodes %+v, want huge pages on node 1 only", n)
	}
}

func get(t *testing.T, addr, path string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d, %v", path, resp.StatusCode, err)
	}
	return string(b)
}
