package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Image is a one-layer image: a few files and the command that starts it.
type Image struct {
	Ref        string   // repository:tag, e.g. locus.local/e2e/pause:1
	Entrypoint []string // absolute path of a file of the image first
	Files      []File
}

// File is one regular file of the layer.
type File struct {
	Path string // absolute path inside the image
	Mode int64  // permission bits
	Data []byte
}

// epoch is the time stamped on every tar entry: the same input gives the same
// bytes, hence the same image ID, so importing twice changes nothing.
var epoch = time.Unix(0, 0).UTC()

// WriteDockerArchive writes img in the layout `docker save` produces and
// `ctr images import` reads: manifest.json, the config named by its digest and
// one uncompressed layer.
func WriteDockerArchive(w io.Writer, img Image) error {
	if err := img.check(); err != nil {
		return err
	}
	layer, err := layerTar(img.Files)
	if err != nil {
		return err
	}
	layerSum := sha256.Sum256(layer)
	layerHex := hex.EncodeToString(layerSum[:])
	config, err := json.Marshal(imageConfig{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Config:       containerConfig{Entrypoint: img.Entrypoint, Env: []string{"PATH=/"}},
		RootFS:       rootFS{Type: "layers", DiffIDs: []string{"sha256:" + layerHex}},
	})
	if err != nil {
		return err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	layerName := layerHex + "/layer.tar"
	manifest, err := json.Marshal([]manifestEntry{{Config: configName, RepoTags: []string{img.Ref}, Layers: []string{layerName}}})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, e := range []struct {
		name string
		data []byte
	}{{configName, config}, {layerHex + "/", nil}, {layerName, layer}, {"manifest.json", manifest}} {
		if err := writeEntry(tw, e.name, 0o644, e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

func (img Image) check() error {
	repo, tag, ok := strings.Cut(img.Ref, ":")
	if !ok || repo == "" || tag == "" || !strings.Contains(strings.Split(repo, "/")[0], ".") {
		// A registry host in the name keeps containerd from reading it as docker.io/library/...
		return fmt.Errorf("image reference %q is not host.domain/path:tag", img.Ref)
	}
	if len(img.Entrypoint) == 0 {
		return fmt.Errorf("image %s: no entrypoint", img.Ref)
	}
	found := false
	for _, f := range img.Files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/" {
			return fmt.Errorf("image %s: file path %q is not a clean absolute path", img.Ref, f.Path)
		}
		found = found || f.Path == img.Entrypoint[0]
	}
	if !found {
		return fmt.Errorf("image %s: entrypoint %s is not one of its files", img.Ref, img.Entrypoint[0])
	}
	return nil
}

// layerTar is the layer's file system: the files, their parent directories
// and an empty /tmp for programs that want one.
func layerTar(files []File) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{"tmp/": true}
	for _, f := range files {
		for d := path.Dir(f.Path); d != "/"; d = path.Dir(d) {
			dirs[strings.TrimPrefix(d, "/")+"/"] = true
		}
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names) // parents before children
	for _, d := range names {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := writeEntry(tw, d, mode, nil); err != nil {
			return nil, err
		}
	}
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for _, f := range sorted {
		if err := writeEntry(tw, strings.TrimPrefix(f.Path, "/"), f.Mode, f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeEntry writes a directory (name ending in "/") or a regular file.
func writeEntry(tw *tar.Writer, name string, mode int64, data []byte) error {
	h := &tar.Header{Name: name, Mode: mode, ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(data))}
	if strings.HasSuffix(name, "/") {
		h.Typeflag, h.Size = tar.TypeDir, 0
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

type manifestEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

type imageConfig struct {
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       containerConfig `json:"config"`
	RootFS       rootFS          `json:"rootfs"`
}

type containerConfig struct {
	Entrypoint []string `json:"Entrypoint"`
	Env        []string `json:"Env"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}
