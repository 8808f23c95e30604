package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (path relative to root -> content).
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		path := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func twoNodeSysfs() map[string]string {
	const n = "devices/system/node/"
	return map[string]string{
		n + "online":         "0-1\n",
		n + "node0/cpulist":  "0-1\n",
		n + "node0/distance": "10 21\n",
		n + "node0/meminfo": "Node 0 MemTotal:        1030000 kB\nNode 0 MemFree:          1010000 kB\n" +
			"Node 0 MemUsed:           20000 kB\n",
		n + "node1/cpulist":  "2-3\n",
		n + "node1/distance": "21 10\n",
		n + "node1/meminfo":  "Node 1 MemTotal:        2048000 kB\nNode 1 MemFree:          1024000 kB\n",
	}
}

func TestBannerLikeNumactl(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, twoNodeSysfs())
	online, nodes, err := readNodes(root)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeNodes(&buf, online, nodes)
	want := `available: 2 nodes (0-1)
node 0 cpus: 0 1
node 0 size: 1005 MB
node 0 free: 986 MB
node 1 cpus: 2 3
node 1 size: 2000 MB
node 1 free: 1000 MB
node distances:
node    0   1
   0:  10  21
   1:  21  10
`
	if buf.String() != want {
		t.Errorf("banner:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestReadNodesErrors(t *testing.T) {
	tests := []struct {
		name, drop, replace, with, wantErr string
	}{
		{name: "no node directory", drop: "devices/system/node/online", wantErr: "online"},
		{name: "garbage online list", replace: "devices/system/node/online", with: "x\n", wantErr: "node/online"},
		{name: "missing cpulist", drop: "devices/system/node/node1/cpulist", wantErr: "node1/cpulist"},
		{name: "missing distance", drop: "devices/system/node/node0/distance", wantErr: "node0/distance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := twoNodeSysfs()
			delete(files, tt.drop)
			if tt.replace != "" {
				files[tt.replace] = tt.with
			}
			root := t.TempDir()
			writeTree(t, root, files)
			_, _, err := readNodes(root)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to name %q", err, tt.wantErr)
			}
		})
	}
}
