package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Spec is one image of the project: a static binary on an empty base, built for
// one or more platforms into a multi-platform index.
type Spec struct {
	Name     string            // the binary's name, also the image's title
	Version  string            // the image tag and org.opencontainers.image.version
	Revision string            // the commit, org.opencontainers.image.revision
	Source   string            // org.opencontainers.image.source
	User     string            // the user it runs as ("65532:65532"), empty for root
	Binaries map[string]string // platform ("linux/amd64") -> path of the binary built for it
}

// binDir is where the binary goes, on the image's PATH: the chart's command is the
// bare name.
const binDir = "/usr/local/bin"

// epoch stamps every file and the config: the same binaries give the same digests.
var epoch = time.Unix(0, 0).UTC()

func (s Spec) check() error {
	switch {
	case s.Name == "" || strings.ContainsAny(s.Name, "/ :"):
		return fmt.Errorf("name %q: want a bare binary name", s.Name)
	case s.Version == "":
		return fmt.Errorf("image %s: no version", s.Name)
	case len(s.Binaries) == 0:
		return fmt.Errorf("image %s: no binary (-bin linux/amd64=PATH)", s.Name)
	}
	for p := range s.Binaries {
		if _, err := v1.ParsePlatform(p); err != nil || !strings.HasPrefix(p, "linux/") || strings.Count(p, "/") != 1 {
			return fmt.Errorf("image %s: platform %q: want linux/ARCH, e.g. linux/amd64", s.Name, p)
		}
	}
	return nil
}

// Labels are the OCI annotations every image carries, in its config (what
// `docker inspect` and registries show) and on its manifests.
func (s Spec) Labels() map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":    s.Name,
		"org.opencontainers.image.version":  s.Version,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	if s.Revision != "" {
		l["org.opencontainers.image.revision"] = s.Revision
	}
	if s.Source != "" {
		l["org.opencontainers.image.source"] = s.Source
	}
	return l
}

// Build makes the image index: one image per platform, sorted by platform.
func Build(s Spec) (v1.ImageIndex, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	platforms := make([]string, 0, len(s.Binaries))
	for p := range s.Binaries {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	idx := mutate.Annotations(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), s.Labels()).(v1.ImageIndex)
	for _, p := range platforms {
		bin, err := os.ReadFile(s.Binaries[p])
		if err != nil {
			return nil, fmt.Errorf("image %s for %s: %w", s.Name, p, err)
		}
		plat, _ := v1.ParsePlatform(p)
		img, err := s.image(*plat, bin)
		if err != nil {
			return nil, fmt.Errorf("image %s for %s: %w", s.Name, p, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: plat, Annotations: s.Labels()}})
	}
	return idx, nil
}

func (s Spec) image(plat v1.Platform, bin []byte) (v1.Image, error) {
	layerTar, err := layer(map[string][]byte{path.Join(binDir, s.Name): bin})
	if err != nil {
		return nil, err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(layerTar)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.AppendLayers(base, l)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = plat.OS, plat.Architecture, plat.Variant
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config = v1.Config{
		Entrypoint: []string{path.Join(binDir, s.Name)},
		Env:        []string{"PATH=" + binDir},
		User:       s.User,
		Labels:     s.Labels(),
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, s.Labels()).(v1.Image), nil
}

// layer is the image's only layer: the files, their directories and an empty /tmp
// (1777) for programs that want one. No shell, no libc, no CA certificates: the
// binaries are static and talk only to the API server, whose CA the pod's service
// account provides.
func layer(files map[string][]byte) ([]byte, error) {
	dirs := map[string]bool{"tmp/": true}
	names := make([]string, 0, len(files))
	for p := range files {
		names = append(names, p)
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			dirs[strings.TrimPrefix(d, "/")+"/"] = true
		}
	}
	entries := make([]string, 0, len(dirs))
	for d := range dirs {
		entries = append(entries, d)
	}
	sort.Strings(entries) // parents before children
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range entries {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Name: d, Mode: mode, ModTime: epoch, Typeflag: tar.TypeDir, Format: tar.FormatPAX}); err != nil {
			return nil, err
		}
	}
	for _, p := range names {
		h := &tar.Header{Name: strings.TrimPrefix(p, "/"), Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeReg,
			Size: int64(len(files[p])), Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[p]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
