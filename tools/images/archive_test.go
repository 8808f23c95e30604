package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// readArchive returns every entry of a tar by name.
func readArchive(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = b
	}
}

func TestDockerArchiveIsConsistentAndReproducible(t *testing.T) {
	img := Image{Ref: "locus.local/e2e/workload:1", Entrypoint: []string{"/bin/workload"},
		Files: []File{{Path: "/bin/workload", Mode: 0o755, Data: []byte("#!binary")}}}
	var a, b bytes.Buffer
	if err := WriteDockerArchive(&a, img); err != nil {
		t.Fatal(err)
	}
	if err := WriteDockerArchive(&b, img); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two archives of the same image differ: imports would not be idempotent")
	}
	entries := readArchive(t, a.Bytes())
	var manifest []manifestEntry
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("manifest.json = %s (%v)", entries["manifest.json"], err)
	}
	m := manifest[0]
	if len(m.RepoTags) != 1 || m.RepoTags[0] != img.Ref || len(m.Layers) != 1 {
		t.Fatalf("manifest = %+v", m)
	}
	config, layer := entries[m.Config], entries[m.Layers[0]]
	if sum := sha256.Sum256(config); hex.EncodeToString(sum[:])+".json" != m.Config {
		t.Errorf("config %s is not named by its digest", m.Config)
	}
	var cfg imageConfig
	if err := json.Unmarshal(config, &cfg); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(layer)
	if want := "sha256:" + hex.EncodeToString(sum[:]); len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != want {
		t.Errorf("diff_ids = %v, want [%s]", cfg.RootFS.DiffIDs, want)
	}
	if cfg.OS != "linux" || strings.Join(cfg.Config.Entrypoint, " ") != "/bin/workload" {
		t.Errorf("config = %+v", cfg)
	}
	files := readArchive(t, layer)
	if string(files["bin/workload"]) != "#!binary" {
		t.Errorf("layer has bin/workload = %q", files["bin/workload"])
	}
	for _, dir := range []string{"bin/", "tmp/"} {
		if _, ok := files[dir]; !ok {
			t.Errorf("layer lacks directory %s; it has %v", dir, keys(files))
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestImageRefused(t *testing.T) {
	bin := []File{{Path: "/pause", Mode: 0o755, Data: []byte("x")}}
	for _, tc := range []struct {
		name string
		img  Image
		want string
	}{
		{"no registry host", Image{Ref: "pause:1", Entrypoint: []string{"/pause"}, Files: bin}, "host.domain"},
		{"no tag", Image{Ref: "locus.local/pause", Entrypoint: []string{"/pause"}, Files: bin}, "host.domain"},
		{"no entrypoint", Image{Ref: "locus.local/pause:1", Files: bin}, "no entrypoint"},
		{"entrypoint not a file", Image{Ref: "locus.local/pause:1", Entrypoint: []string{"/sh"}, Files: bin}, "not one of its files"},
		{"relative path", Image{Ref: "locus.local/pause:1", Entrypoint: []string{"pause"},
			Files: []File{{Path: "pause", Data: []byte("x")}}}, "clean absolute"},
		{"dot-dot path", Image{Ref: "locus.local/pause:1", Entrypoint: []string{"/pause"},
			Files: append([]File{{Path: "/a/../b", Data: []byte("x")}}, bin...)}, "clean absolute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WriteDockerArchive(io.Discard, tc.img)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
